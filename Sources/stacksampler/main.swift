print("stacksampler")
