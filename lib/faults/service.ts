import type { Scope } from '../scope';
import { FaultSet, type FaultRuleInput, type FaultRules } from '../data-set/fault-rules';


/** The fault rules of each data set, for the routes and the test kit. */
export interface FaultsApi {
    /** Replaces a data set's rules; the input has passed faultSchemas' faultRulesPayload. */
    set(scope: Scope, input: { seed: number; rules: FaultRuleInput[] }): FaultRules;
    /** A data set's rules with their hits; none set reads as seed 0 and no rules. */
    get(scope: Scope): FaultRules;
    /** Removes a data set's rules. */
    clear(scope: Scope): void;
}


/** The fault rules of each data set; each data set carries its rules, so that a deleted instance takes them with it. */
export const faultsService: FaultsApi = {
    set(scope, input) {

        const set = new FaultSet(input.seed, input.rules);
        scope.services.faults = set;
        return set.describe();
    },
    get: (scope) => scope.services.faults?.describe() ?? { seed: 0, rules: [] },
    clear(scope) {

        scope.services.faults = null;
    }
};
