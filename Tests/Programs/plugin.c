/* plugin: a tiny shared library that loader_churn dlopens and dlcloses.
 * Build: gcc -O2 -shared -fPIC -o plugin plugin.c */
unsigned long plugin_work(unsigned long seed) {
    unsigned long x = seed;
    for (int i = 0; i < 1000; i++) x = x * 6364136223846793005UL + 1442695040888963407UL;
    return x;
}
