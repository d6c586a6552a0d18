#include <stdio.h>

/**
 * Adds two ints.
 */
int add(int a, int b) {
    // plain comment
    return a + b; /* trailing */
}

/* a block
 * comment */

typedef struct {
    int x;
} point;

/// Prints a greeting.
void greet(const char *name) {
    printf("hello, %s\n",
           name);
}
