// glibc's malloc tuning (mallopt), for the streakd executable's process set-up only.
#include <malloc.h>
