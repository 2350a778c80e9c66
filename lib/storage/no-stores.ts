import type { StoreFactories } from '../namespace';


// Asking a namespace that keeps no records (weather) for its store is a programmer mistake.
const keepsNoRecords = (): never => {

    throw new Error('This namespace keeps no records: it has no store');
};

/** The factories of a namespace without a store. */
export const noStores: StoreFactories<never> = { sqlite: keepsNoRecords, postgres: () => Promise.resolve(keepsNoRecords) };
