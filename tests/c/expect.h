/* The C tests' one assertion: EXPECT(condition, printf-style message) counts
 * a failure and reports where; main() returns non-zero when any failed. */
#ifndef KESTREL_TESTS_C_EXPECT_H
#define KESTREL_TESTS_C_EXPECT_H

#include <stdio.h>

static int failures = 0;

#define EXPECT(cond, ...)                                                       \
    do {                                                                        \
        if (!(cond)) {                                                          \
            ++failures;                                                         \
            fprintf(stderr, "%s:%d: expected %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                       \
            fprintf(stderr, "\n");                                              \
        }                                                                       \
    } while (0)

#endif
