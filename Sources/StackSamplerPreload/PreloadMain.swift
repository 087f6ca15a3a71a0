import StackSampler

@_cdecl("stacksampler_preload_main")
public func stacksamplerPreloadMain() {}
