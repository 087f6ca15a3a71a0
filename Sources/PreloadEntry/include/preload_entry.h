/* Entry point of the preload library, defined in Swift (StackSamplerPreload). */
#ifndef STACKSAMPLER_PRELOAD_ENTRY_H
#define STACKSAMPLER_PRELOAD_ENTRY_H
void stacksampler_preload_main(void);
#endif
