// JIT-compiled JavaScript on a CPU loop, for node --perf-basic-prof (which writes
// /tmp/perf-PID.map): `outerLoop` -> `middleStep` -> `innerHot` for about argv[2] seconds
// (default 1) of CPU time; prints `done`. V8 keeps frame pointers in the code it generates
// and has no .eh_frame for it: a profiler's walk meets its frames without CFI.
function innerHot(seed) {
    let x = seed | 0;
    for (let i = 0; i < 20000; i++) x = (Math.imul(x, 1103515245) + 12345) | 0;
    return x;
}

function middleStep(seed) {
    return innerHot(seed) ^ innerHot(seed + 1);
}

function outerLoop(seconds) {
    const end = process.cpuUsage().user + seconds * 1e6;
    let total = 0;
    while (process.cpuUsage().user < end) total ^= middleStep(total);
    return total;
}

const seconds = parseFloat(process.argv[2] || "1");
console.log("done", outerLoop(seconds) & 1);
