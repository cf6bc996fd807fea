// libsystemd's sd-journal and sd-bus, for the delivery layer only.
#include <systemd/sd-journal.h>
#include <systemd/sd-bus.h>
#include <sys/uio.h>
