/** The PostgreSQL the tests use: LOCALGATE_TEST_PG_URL, else the one every machine of the project runs. */
export const pgUrl: string;
/** Whether the PostgreSQL lane skips: no server answers and this is not CI. */
export const skipped: boolean;
/** The one line a skipped lane prints, with how to run it. */
export const skipLine: string;
