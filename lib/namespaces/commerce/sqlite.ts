import type { Statement, Transaction } from 'better-sqlite3';

import type { RecordContext } from '../../record-context';
import type { ListResult, Page } from '../../lists';
import { fromMinorUnits, offerRecord, toMinorUnits, type Priced } from './money';
import { inquiryCreatedEvent, productCreatedEvent, scamReportEvents } from './events';
import { checkFirstReport } from './rules';
import type { Business, CommerceStore, Inquiry, NewInquiry, NewProduct, NewScamReport, Offer, Product, ScamReport, TargetType } from './store';
import { createdAt, found, referenced } from '../../records';
import { offerStatusColumn } from '../../storage/lifecycle-sql';
import { eventWriter } from '../../storage/sqlite/events';
import type { Database } from '../../storage/sqlite/open';
import { lazyStatements, settled, sql, type Statements } from '../../storage/sqlite/statements';


// A product row as an array in productColumns order: better-sqlite3 builds arrays faster than objects, and a page
// holds up to 100 rows that are copied into records anyway.
type ProductRow = [id: string, name: string, description: string, priceMinor: number, currency: string, businessId: string, createdBy: string, createdAt: string, scamReportCount: number];

// A list that may be narrowed to the records of one parent (the products of a business, the offers of a product).
interface ListStatements<Row, Params extends Page = Page> {
    parentColumn: string;
    all: () => Statement<[Params], Row>;
    countAll: () => Statement<[], Total>;
    ofParent: () => Statement<[Params & PageOfParent], Row>;
    countOfParent: () => Statement<[string], Total>;
}

type Total = { total: number };

// A page of the records of one parent, named by its column (business_id, product_id).
type PageOfParent = Page & Record<string, string | number>;

type Found = { found: 1 };

// A page read at an instant: the store's clock as text, which the statuses that move with time are read at.
type PageAtNow = Page & { now: string };


const productColumns = 'id, name, description, price_minor, currency, business_id, created_by, created_at, scam_report_count';
const businessColumns = 'id, name, description, category, city, phone, created_at, scam_report_count';
// An offer as it reads at @now: its status is the one the clock implies (lifecycle-sql.ts).
const offerColumns = `id, product_id, title, price_minor, currency, valid_from, valid_until, ${offerStatusColumn('@now')}, created_at, scam_report_count`;
const inquiryColumns = 'id, product_id, business_id, message, owner_id, created_at';
const scamReportColumns = 'id, target_type, target_id, reason, reporter_id, created_at';

// Every list is oldest first with the id breaking ties, served by an index on (filter, created_at, id).
// LIMIT and OFFSET take their parameters behind a unary plus: SQLite plans a bare LIMIT parameter with its bound value,
// and so prepares the statement again each time a new value is bound, that is on every call.
// Exported so that a test can show their query plans.
export const queries = {
    listProducts: sql<[Page], ProductRow>(`SELECT ${productColumns} FROM products ORDER BY created_at, id LIMIT +@limit OFFSET +@offset`),
    listProductsOfBusiness: sql<[PageOfParent], ProductRow>(`SELECT ${productColumns} FROM products WHERE business_id = @business_id ORDER BY created_at, id LIMIT +@limit OFFSET +@offset`),
    countProducts: sql<[], Total>('SELECT products AS total FROM catalogue_totals WHERE id = 1'),
    countProductsOfBusiness: sql<[string], Total>('SELECT coalesce((SELECT product_count FROM businesses WHERE id = ?), 0) AS total'),
    latestProduct: sql<[], { latest: string | null }>('SELECT max(created_at) AS latest FROM products'),
    product: sql<[string], ProductRow>(`SELECT ${productColumns} FROM products WHERE id = ?`),
    insertProduct: sql<[Omit<Priced<Product>, 'scam_report_count'>]>(`INSERT INTO products (id, name, description, price_minor, currency, business_id, created_by, created_at)
        VALUES (@id, @name, @description, @price_minor, @currency, @business_id, @created_by, @created_at)`),

    listBusinesses: sql<[Page], Business>(`SELECT ${businessColumns} FROM businesses ORDER BY created_at, id LIMIT +@limit OFFSET +@offset`),
    countBusinesses: sql<[], Total>('SELECT count(*) AS total FROM businesses'),
    business: sql<[string], Business>(`SELECT ${businessColumns} FROM businesses WHERE id = ?`),

    listOffers: sql<[PageAtNow], Priced<Offer>>(`SELECT ${offerColumns} FROM offers ORDER BY created_at, id LIMIT +@limit OFFSET +@offset`),
    listOffersOfProduct: sql<[PageAtNow & PageOfParent], Priced<Offer>>(`SELECT ${offerColumns} FROM offers WHERE product_id = @product_id ORDER BY created_at, id LIMIT +@limit OFFSET +@offset`),
    countOffers: sql<[], Total>('SELECT count(*) AS total FROM offers'),
    countOffersOfProduct: sql<[string], Total>('SELECT count(*) AS total FROM offers WHERE product_id = ?'),

    productExists: sql<[string], Found>('SELECT 1 AS found FROM products WHERE id = ?'),
    businessExists: sql<[string], Found>('SELECT 1 AS found FROM businesses WHERE id = ?'),
    offerExists: sql<[string], Found>('SELECT 1 AS found FROM offers WHERE id = ?'),

    insertInquiry: sql<[Inquiry]>(`INSERT INTO inquiries (id, product_id, business_id, message, owner_id, created_at)
        VALUES (@id, @product_id, @business_id, @message, @owner_id, @created_at)`),
    inquiry: sql<[string, string], Inquiry>(`SELECT ${inquiryColumns} FROM inquiries WHERE id = ? AND owner_id = ?`),

    scamReportByReporter: sql<[TargetType, string, string], Found>('SELECT 1 AS found FROM scam_reports WHERE target_type = ? AND target_id = ? AND reporter_id = ?'),
    insertScamReport: sql<[ScamReport]>(`INSERT INTO scam_reports (id, target_type, target_id, reason, reporter_id, created_at)
        VALUES (@id, @target_type, @target_id, @reason, @reporter_id, @created_at)`),
    scamReport: sql<[string, string], ScamReport>(`SELECT ${scamReportColumns} FROM scam_reports WHERE id = ? AND reporter_id = ?`)
};


const existsQuery = { product: 'productExists', business: 'businessExists', offer: 'offerExists' } as const;


/** All commerce SQL: listings, inquiries and scam reports over one namespace database. */
export class SqliteCommerceStore implements CommerceStore {

    private readonly sql: Statements<typeof queries>;
    private readonly readProducts: Transaction<(filter: { business_id?: string }, page: Page) => ListResult<Product>>;
    private readonly readBusinesses: Transaction<(page: Page) => ListResult<Business>>;
    private readonly readOffers: Transaction<(filter: { product_id?: string }, page: Page) => ListResult<Offer>>;
    private readonly insertProduct: (input: NewProduct, createdBy: string) => Product;
    private readonly insertInquiry: (input: NewInquiry, ownerId: string) => Inquiry;
    private readonly insertScamReport: (input: NewScamReport, reporterId: string) => ScamReport;

    constructor(db: Database, context: RecordContext) {

        const statements = lazyStatements(db, queries);
        this.sql = statements;
        const events = eventWriter(db);

        const products: ListStatements<ProductRow> = {
            parentColumn: 'business_id',
            all: () => statements.listProducts.raw(),
            countAll: () => statements.countProducts,
            ofParent: () => statements.listProductsOfBusiness.raw(),
            countOfParent: () => statements.countProductsOfBusiness
        };

        const offers: ListStatements<Priced<Offer>, PageAtNow> = {
            parentColumn: 'product_id',
            all: () => statements.listOffers,
            countAll: () => statements.countOffers,
            ofParent: () => statements.listOffersOfProduct,
            countOfParent: () => statements.countOffersOfProduct
        };

        // Each page and its total come from one read transaction, so they agree.
        this.readProducts = db.transaction((filter: { business_id?: string }, page: Page) => {

            const { rows, total } = readPage(products, filter.business_id, page);
            return { data: rows.map(toProduct), total };
        });

        this.readBusinesses = db.transaction((page: Page) => ({
            data: statements.listBusinesses.all(page),
            total: found(statements.countBusinesses.get(), 'business').total
        }));

        this.readOffers = db.transaction((filter: { product_id?: string }, page: Page) => {

            const { rows, total } = readPage(offers, filter.product_id, { ...page, now: context.clock.now().toISOString() });
            return { data: rows.map(offerRecord), total };
        });

        this.insertProduct = events.writing(context, (input: NewProduct, createdBy: string) => {

            this.requireTarget('business', input.business_id, 'business_id');
            const id = context.ids.next();
            const { latest } = found(statements.latestProduct.get(), 'product');
            statements.insertProduct.run({
                id,
                name: input.name,
                description: input.description,
                price_minor: toMinorUnits(input.price, input.currency),
                currency: input.currency,
                business_id: input.business_id,
                created_by: createdBy,
                created_at: createdAt(context.clock, latest)
            });

            const product = toProduct(found(statements.product.raw().get(id), 'product'));
            events.write(context, productCreatedEvent(product));
            return product;
        });

        this.insertInquiry = events.writing(context, (input: NewInquiry, ownerId: string) => {

            if ('product_id' in input) {
                this.requireTarget('product', input.product_id, 'product_id');
            }
            else {
                this.requireTarget('business', input.business_id, 'business_id');
            }

            const id = context.ids.next();
            statements.insertInquiry.run({ id, product_id: null, business_id: null, ...input, owner_id: ownerId, created_at: createdAt(context.clock) });
            const inquiry = found(statements.inquiry.get(id, ownerId), 'inquiry');
            events.write(context, inquiryCreatedEvent(inquiry));
            return inquiry;
        });

        this.insertScamReport = events.writing(context, (input: NewScamReport, reporterId: string) => {

            this.requireTarget(input.target_type, input.target_id, 'target_id');
            checkFirstReport(input.target_type, statements.scamReportByReporter.get(input.target_type, input.target_id, reporterId) !== undefined);
            const id = context.ids.next();
            statements.insertScamReport.run({ id, ...input, reporter_id: reporterId, created_at: createdAt(context.clock) });
            const report = found(statements.scamReport.get(id, reporterId), 'scam_report');
            // The business as its GET reads it, its count raised by this report (the trigger of migration 001).
            const business = report.target_type === 'business' ? statements.business.get(report.target_id) : undefined;
            for (const event of scamReportEvents(report, business)) {
                events.write(context, event);
            }

            return report;
        });
    }

    listProducts(filter: { business_id?: string }, page: Page): Promise<ListResult<Product>> {

        return settled(() => this.readProducts.deferred(filter, page));
    }

    getProduct(id: string): Promise<Product> {

        return settled(() => toProduct(found(this.sql.product.raw().get(id), 'product')));
    }

    createProduct(input: NewProduct, createdBy: string): Promise<Product> {

        return settled(() => this.insertProduct(input, createdBy));
    }

    listBusinesses(page: Page): Promise<ListResult<Business>> {

        return settled(() => this.readBusinesses.deferred(page));
    }

    getBusiness(id: string): Promise<Business> {

        return settled(() => found(this.sql.business.get(id), 'business'));
    }

    listOffers(filter: { product_id?: string }, page: Page): Promise<ListResult<Offer>> {

        return settled(() => this.readOffers.deferred(filter, page));
    }

    createInquiry(input: NewInquiry, ownerId: string): Promise<Inquiry> {

        return settled(() => this.insertInquiry(input, ownerId));
    }

    getInquiry(id: string, ownerId: string): Promise<Inquiry> {

        return settled(() => found(this.sql.inquiry.get(id, ownerId), 'inquiry'));
    }

    createScamReport(input: NewScamReport, reporterId: string): Promise<ScamReport> {

        return settled(() => this.insertScamReport(input, reporterId));
    }

    getScamReport(id: string, reporterId: string): Promise<ScamReport> {

        return settled(() => found(this.sql.scamReport.get(id, reporterId), 'scam_report'));
    }

    private requireTarget(type: TargetType, id: string, field: string): void {

        referenced(this.sql[existsQuery[type]].get(id), type, field);
    }
}


/** One page of a list, of one parent when its id is given, and the total it is a page of. */
function readPage<Row, Params extends Page>(list: ListStatements<Row, Params>, parentId: string | undefined, page: Params): { rows: Row[]; total: number } {

    if (parentId === undefined) {
        return { rows: list.all().all(page), total: found(list.countAll().get(), 'record').total };
    }

    return {
        rows: list.ofParent().all({ ...page, [list.parentColumn]: parentId }),
        total: found(list.countOfParent().get(parentId), 'record').total
    };
}


function toProduct([id, name, description, priceMinor, currency, businessId, createdBy, created, scamReportCount]: ProductRow): Product {

    return {
        id,
        name,
        description,
        price: fromMinorUnits(priceMinor, currency),
        currency,
        business_id: businessId,
        created_by: createdBy,
        created_at: created,
        scam_report_count: scamReportCount
    };
}
