// The one place that reads the code Node (or a driver) puts on an error it throws: EEXIST, EADDRINUSE, SQLITE_BUSY.

/** The code of an error, when it carries one as text; undefined for anything else thrown. */
export function errnoCode(err: unknown): string | undefined {

    const code: unknown = typeof err === 'object' && err !== null && 'code' in err ? err.code : undefined;
    return typeof code === 'string' ? code : undefined;
}


/** The message of an error; anything else thrown, as text. */
export function errorMessage(err: unknown): string {

    return err instanceof Error ? err.message : String(err);
}


/** An error to throw on with its message restated from what it said (its code and stack kept); anything else thrown becomes an Error. */
export function restated(err: unknown, message: (found: string) => string): Error {

    if (err instanceof Error) {
        err.message = message(err.message);
        return err;
    }

    return new Error(message(String(err)));
}
