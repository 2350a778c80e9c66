// What the settings and the modules that check a setting of their own (auth's secret file, storage's data directory)
// share: a leaf, so that none of them imports config.ts.

/** A setting refused: names the setting a user can change (an environment variable or a flag) and why. */
export class SettingError extends Error {

    constructor(public readonly setting: string, public readonly reason: string) {

        super(`${setting} ${reason}`);
        this.name = 'SettingError';
    }
}


/** The bytes a token secret has at least, set (AUTH_JWT_SECRET) or kept in the data directory. */
export const minSecretBytes = 32;

/** The data directory setting that asks for storage in memory (DATA_DIR=:memory:, or dataDir in code). */
export const memoryDataDir = ':memory:';

export const consoleApiModes = ['auto', 'on', 'off'] as const;

/** CONSOLE_API: the console's token and live-log endpoints mounted on a loopback host only (auto), on any (on), never (off). */
export type ConsoleApiMode = typeof consoleApiModes[number];
