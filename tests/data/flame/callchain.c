/* Known call structure for the flame fixture: main -> a -> b burns ~2/3, main -> c ~1/3.
   Built with: gcc -O0 -fno-omit-frame-pointer -o callchain callchain.c */
#include <stdio.h>
#include <time.h>
volatile unsigned long sink;
void b(void) { for (unsigned long i = 0; i < 200000; i++) sink += i * i; }
void a(void) { b(); }
void c(void) { for (unsigned long i = 0; i < 100000; i++) sink += i ^ 3; }
int main(void) {
    time_t end = time(NULL) + 4;
    while (time(NULL) < end) { a(); c(); }
    printf("%lu\n", sink);
    return 0;
}
