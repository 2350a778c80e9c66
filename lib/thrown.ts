// What code reads of a value it did not type itself, a thrown value or parsed JSON, without asserting its shape.

/** The message of anything thrown: an Error's own, else the value as text. */
export function thrownMessage(err: unknown): string {

    return err instanceof Error ? err.message : String(err);
}


/** The value under a key of anything, its prototype's included: undefined for a value that is no object. */
export function fieldOf(value: unknown, key: string): unknown {

    return typeof value === 'object' && value !== null ? Reflect.get(value, key) : undefined;
}
