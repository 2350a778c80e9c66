import type { NamespaceSchema } from '../../namespace';
import { openNamespace } from './files';
import { seedDemo } from './fixtures';
import { closeDatabase, memory } from './open';


// Data sets in memory are made many times in one process: each namespace is migrated, and seeded or not, once into an
// image, and every new data set gets its own copy of that image. Images are kept by the folder of the namespace's
// migrations and its name, so that two namespaces of one name from different folders never share one.
const images = new Map<string, Buffer>();


/** The image of a namespace database in memory: migrated, with the demo data when seeded. */
export function namespaceImage(namespace: NamespaceSchema, seeded: boolean): Buffer {

    const key = `${namespace.migrations}:${namespace.name}:${seeded}`;
    let image = images.get(key);
    if (!image) {
        const db = openNamespace(memory, namespace, namespace.name === 'pay' ? { synchronous: 'FULL' } : {});
        try {
            if (seeded) {
                seedDemo(db, namespace);
            }

            image = db.serialize();
        }
        finally {
            closeDatabase(db);
        }

        images.set(key, image);
    }

    return image;
}
