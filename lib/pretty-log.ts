import Stream from 'node:stream';


// pino's level numbers, as its lines carry them.
const levelNames: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };

interface LogLine {
    level: number;
    time: number;
    msg?: string;
    req?: { id: string };
    err?: { message: string };
}


/** One pino JSON line as a person reads it: local time, the level unless info, the message, the error, the request id. */
export function prettyLine(json: string): string {

    const line = JSON.parse(json) as LogLine;
    const time = new Date(line.time).toTimeString().slice(0, 8);
    const level = line.level === 30 ? '' : ` ${levelNames[line.level] ?? line.level}`;
    // A request's line starts with hapi-pino's "[response] ": the method, path, status and time follow.
    const message = (line.msg ?? '').replace(/^\[response\] /, '');
    const error = line.err ? `: ${line.err.message}` : '';
    const id = line.req ? `  ${line.req.id}` : '';
    return `${time}${level} ${message}${error}${id}\n`;
}


/** A stream that takes pino's JSON lines and writes them to out as pretty lines, one a line. */
export function prettyLogStream(out: { write(text: string): unknown }): Stream.Writable {

    return new Stream.Writable({
        write(chunk: Buffer, encoding, done) {

            // pino writes each record whole, ending in a newline; a write may carry several when buffered.
            const lines = chunk.toString('utf8').split('\n').filter(Boolean);
            out.write(lines.map(prettyLine).join(''));
            done();
        }
    });
}
