// What always exists by construction (the row of an aggregate, a pragma or an INSERT ... RETURNING, a statement a
// posting names): the drivers and records type it as perhaps none, and none would be a fault of the code, not a record
// that is absent (that is `one` / `maybe`).

/** A value that always exists; none is thrown as the fault it is, naming what gave none. */
export function always<T>(value: T | undefined, what: string): T {

    if (value === undefined) {
        throw new Error(`${what} gave none`);
    }

    return value;
}


/** A value that is never null where it is read (a column written beside another); null is thrown as the fault it is. */
export function present<T>(value: T | null, what: string): T {

    if (value === null) {
        throw new Error(`${what} is null`);
    }

    return value;
}
