/**
 * The transitions a data set's world makes on its own as its clock passes an instant: a pending payment settling, a
 * booking starting or ending. Each is a row with its due instant in the namespace's database, never only a timer in
 * memory; the timeline (timeline.ts) finds what is due and asks the namespace's store to apply it. An offer's end is
 * no transition: it changes no other record and announces nothing, so reads take it off the clock (lifecycle-sql.ts).
 */

/**
 * What a transition is, named as the event of its change: `<namespace>.<record>.<what happened>`, one of the types a
 * namespace's descriptor lists as its `transitions`.
 */
export type TransitionType = string;

/** The transition types of these namespaces, in the list's order. */
export function transitionTypesOf(namespaces: readonly { readonly transitions?: readonly string[] }[]): TransitionType[] {

    return namespaces.flatMap((namespace) => namespace.transitions ?? []);
}

/** One transition applied: its type, the record it moved and the instant it was due (which the record is stamped with). */
export interface AppliedTransition {
    type: TransitionType;
    id: string;
    due: string;
}

/** How many transitions of each type a move of the clock applied; types with none are absent. */
export type AppliedCounts = Partial<Record<TransitionType, number>>;

/**
 * Applies transitions one claim at a time, earliest first, until none is due or `limit` are applied: for a store whose
 * next transition can be one the last made (a booking started falls due to complete), each claim in its own transaction.
 */
export async function claimEach(limit: number, claim: () => Promise<AppliedTransition | null | undefined>): Promise<AppliedTransition[]> {

    const applied: AppliedTransition[] = [];
    while (applied.length < limit) {
        const next = await claim();
        if (!next) {
            break;
        }

        applied.push(next);
    }

    return applied;
}


/** A store whose records move with time: it says when its next transition falls due and applies those that have. */
export interface TimedStore {

    /** The earliest due instant of a transition not applied yet, or null when nothing is pending. */
    nextDue(): Promise<Date | null>;

    /**
     * Applies the transitions due at or before `until`, earliest first (ties by record id), at most `limit` of them.
     * Each is claimed in the database in its own transaction (a conditional update of the row that is still pending),
     * so that across processes each is applied exactly once; one another process applied first is skipped, not
     * reported. Each is stamped with its own due instant, never with `until`. Answers what it applied, in order.
     */
    applyDue(until: Date, limit: number): Promise<AppliedTransition[]>;
}
