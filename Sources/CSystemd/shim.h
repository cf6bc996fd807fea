// libsystemd: sd-journal and sd-bus for the delivery layer; sd-daemon (socket activation,
// sd_notify, the watchdog) for `streakd serve`.
#include <systemd/sd-journal.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#include <sys/uio.h>
