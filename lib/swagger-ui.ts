import Module from 'node:module';
import Path from 'node:path';


// hapi-swagger only asks swagger-ui-dist where its files are, but that package's index also evaluates the 1.4 MB
// browser bundle in Node: a fifth of a second at every start, and globals left behind. This answers for it, and
// must be imported before hapi-swagger.
const file = require.resolve('swagger-ui-dist');

/** Where swagger-ui's files are. */
export const swaggerUiFolder = Path.dirname(file);

const stand = new Module(file);
stand.filename = file;
stand.loaded = true;
stand.exports = { getAbsoluteFSPath: () => swaggerUiFolder };
require.cache[file] = stand;
