/* The batch hook of Benchmarks/deliveries (SPEC §12, `batch`): reads the notifications' JSON
 * objects, one a line, on stdin, prints each one's "key" on stdout, one a line (delivered), and
 * appends the same keys to LOG with one write, so that the benchmark counts what every process
 * of the hook was given: lost and repeated keys.   batch-hook LOG
 * Build: gcc -O2 -o batch-hook batch-hook.c */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: batch-hook LOG\n");
        return 64;
    }
    size_t size = 1 << 16, used = 0;
    char *keys = malloc(size), *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, stdin)) > 0) {
        /* The key is the object's last field: "key":"...". Keys hold no quotes or escapes here. */
        char *k = strstr(line, "\"key\":\"");
        if (!k) continue;
        k += 7;
        char *end = strchr(k, '"');
        if (!end) continue;
        size_t len = (size_t)(end - k);
        while (used + len + 1 > size) keys = realloc(keys, size *= 2);
        memcpy(keys + used, k, len);
        used += len;
        keys[used++] = '\n';
    }
    int log = open(argv[1], O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (log < 0 || write(log, keys, used) != (ssize_t)used) {
        perror(argv[1]);
        return 75;
    }
    if (fwrite(keys, 1, used, stdout) != used) return 75;
    return 0;
}
