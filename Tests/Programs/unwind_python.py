"""Python code through the C libraries it embeds, for argv[1] seconds of CPU (default 1):
libpython's interpreter, liblzma (lzma), zlib (zlib), libsqlite3 (sqlite3) and libc. Sleeps
50 ms after its imports (a profiler compiles the unwind tables of modules loaded since its last
look). Prints `done`."""
import lzma
import sqlite3
import sys
import time
import zlib

time.sleep(0.05)
seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
data = bytes((i * 7919) % 251 for i in range(200_000))
database = sqlite3.connect(":memory:")
database.execute("create table t (k integer primary key, v text)")
end = time.process_time() + seconds
while time.process_time() < end:
    zlib.decompress(zlib.compress(data, 6))
    lzma.compress(data[:50_000], preset=1)
    database.executemany("insert or replace into t values (?, ?)", ((i, str(i * i)) for i in range(2000)))
    database.execute("select sum(length(v)) from t where v like '%7%'").fetchone()
    sum(len(str(i)) for i in range(20_000))
print("done")
