/* The floor for any loader: read a file in big chunks and count its lines.
   Usage: scan FILE   prints "BYTES LINES". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK (1 << 20)

int main(int argc, char **argv)
{
    static char buf[CHUNK];
    unsigned long long bytes = 0, lines = 0;
    size_t n;
    FILE *f;

    if (argc != 2) {
        fprintf(stderr, "usage: scan FILE\n");
        return 2;
    }
    f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    while ((n = fread(buf, 1, CHUNK, f)) > 0) {
        const char *p = buf, *end = buf + n;
        bytes += n;
        while ((p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
            lines++;
            p++;
        }
    }
    if (ferror(f)) {
        perror(argv[1]);
        return 1;
    }
    fclose(f);
    printf("%llu %llu\n", bytes, lines);
    return 0;
}
