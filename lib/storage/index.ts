import type { Settings } from '../config';
import type { Engine } from './engine';
import { SqliteEngine } from './sqlite/engine';


export { provisionPay, rotatePayKeys, type PayCredentials } from './sqlite/provision';


/** The engine the settings name; SQLite is the only one today. */
export function createEngine(settings: Settings): Engine {

    return new SqliteEngine(settings);
}
