import Code from '@hapi/code';
import Lab from '@hapi/lab';

import { wallContext } from '../lib/record-context';
import { namespaceImage } from '../lib/storage/sqlite/images';
import { SqliteNamespace } from '../lib/storage/sqlite/namespace';
import { openCopy } from '../lib/storage/sqlite/open';
import { commerceNamespace } from '../lib/namespaces/commerce';
import { payNamespace } from '../lib/namespaces/pay';


export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;


describe('an SQLite copy in memory', () => {

    it('serializes to the image it was copied from until it changes, then to its new bytes', () => {

        const image = namespaceImage(commerceNamespace, false);
        const namespace = new SqliteNamespace(commerceNamespace, openCopy(image), 'memory', image);
        expect(namespace.serialize()).to.shallow.equal(image);

        namespace.db.prepare(`INSERT INTO businesses (id, name, description, category, city, phone, created_at) VALUES ('b-1', 'Kiosk', '', 'Kiosk', 'Harbourside', '1', '2030-01-01T00:00:00.000Z')`).run();
        const changed = namespace.serialize();
        expect(changed).to.not.shallow.equal(image);
        expect(namespace.serialize()).to.shallow.equal(changed);

        namespace.replace(image);
        expect(namespace.serialize()).to.shallow.equal(image);
        expect(namespace.db.prepare('SELECT count(*) FROM businesses').pluck().get()).to.equal(0);
        void namespace.close();
    });

    it('opens a copy given as its image only when it is first used, and refuses use after close either way', async () => {

        const image = namespaceImage(commerceNamespace, true);
        const unused = new SqliteNamespace(commerceNamespace, null, 'memory', image);
        expect(unused.serialize()).to.shallow.equal(image);
        unused.replace(namespaceImage(commerceNamespace, false));
        expect(unused.serialize()).to.shallow.equal(namespaceImage(commerceNamespace, false));
        await unused.close();
        expect(() => unused.db.prepare('SELECT 1')).to.throw(TypeError, 'The database connection is not open');

        const used = new SqliteNamespace(commerceNamespace, null, 'memory', image);
        expect(used.db.prepare('SELECT count(*) FROM businesses').pluck().get()).to.equal(10);
        expect(used.db).to.shallow.equal(used.db);
        await used.close();
        expect(() => used.db.prepare('SELECT 1')).to.throw(TypeError, 'The database connection is not open');
    });

    it('keeps pay\'s image the same way', async () => {

        const made = namespaceImage(payNamespace, false);
        const pay = new SqliteNamespace(payNamespace, openCopy(made), 'memory', made);
        const image = pay.serialize();
        expect(pay.serialize()).to.shallow.equal(image);
        const store = payNamespace.stores!.sqlite(pay.db, wallContext());
        await store.openWallet('alice');
        const changed = pay.serialize();
        expect(changed).to.not.shallow.equal(image);
        pay.replace(image);
        expect(pay.serialize()).to.shallow.equal(image);
        await pay.close();
    });
});
