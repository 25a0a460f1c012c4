/* Fixture program for tests/unit/test_callgrind.py: main loops n times over f(), f calls g(),
 * and g recurses to a fixed depth, so every iteration costs the same instructions. */
#include <stdlib.h>

static volatile long sink;

static long g(int depth)
{
    if (depth == 0)
        return 1;
    return depth + g(depth - 1);
}

static long f(int i)
{
    long acc = i;
    for (int k = 0; k < 4; k++)
        acc += k * 3;
    return acc + g(3);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 10;
    for (int i = 0; i < n; i++)
        sink += f(i);
    return 0;
}
