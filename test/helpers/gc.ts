import V8 from 'node:v8';
import Vm from 'node:vm';


// lab runs without --expose-gc: the flag, set at run time, gives a new context the gc function, which collects the
// whole heap. A test that measures the heap calls it before each reading, so that garbage is not counted.
V8.setFlagsFromString('--expose-gc');
const gc = Vm.runInNewContext('gc') as () => void;


/** The bytes the heap holds once everything unreachable is collected. */
export function liveHeapBytes(): number {

    gc();
    gc();
    return process.memoryUsage().heapUsed;
}
