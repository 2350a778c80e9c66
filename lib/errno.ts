// The one place that reads the code Node (or a driver) puts on an error it throws: EEXIST, EADDRINUSE, SQLITE_BUSY.

/** The code of an error, when it carries one as text; undefined for anything else thrown. */
export function errnoCode(err: unknown): string | undefined {

    const code: unknown = typeof err === 'object' && err !== null && 'code' in err ? err.code : undefined;
    return typeof code === 'string' ? code : undefined;
}
