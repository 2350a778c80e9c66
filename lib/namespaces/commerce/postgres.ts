import type { RecordContext } from '../../record-context';
import type { ListResult, Page } from '../../lists';
import { fromMinorUnits, offerRecord, toMinorUnits, type Priced } from './money';
import { inquiryCreatedEvent, productCreatedEvent, scamReportEvents } from './events';
import { checkFirstReport } from './rules';
import type { Business, CommerceStore, Inquiry, NewInquiry, NewProduct, NewScamReport, Offer, Product, ScamReport, TargetType } from './store';
import { createdAt, found, referenced } from '../../records';
import { insertRow, sql, type PgDatabase, type Runner } from '../../storage/postgres/database';
import { eventWriter, type PgEventWriter } from '../../storage/postgres/events';
import { offerStatusColumn } from '../../storage/lifecycle-sql';
import { pageOf, paged, serverNow, type PageParams, type Paged } from '../../storage/postgres/pages';


// What a new product or scam report needs decided: whether its target exists, and the times its created_at comes from.
interface ProductFacts {
    business: boolean;
    latest: string | null;
    now: string;
}

interface InquiryFacts {
    target: boolean;
    now: string;
}

interface ReportFacts {
    target: boolean;
    reported: boolean;
    now: string;
}


// Minor units are bigint: read as float8 so that pg gives a number (every amount the checks allow is exact in one).
const productColumns = 'id, name, description, price_minor::float8 AS price_minor, currency, business_id, created_by, created_at, scam_report_count';
const businessColumns = 'id, name, description, category, city, phone, created_at, scam_report_count';
const inquiryColumns = 'id, product_id, business_id, message, owner_id, created_at';
const scamReportColumns = 'id, target_type, target_id, reason, reporter_id, created_at';


// An offer as it reads at now (the parameter named): its status is the one the clock implies (lifecycle-sql.ts).
function offerAt(now: string): string {

    return `id, product_id, title, price_minor::float8 AS price_minor, currency, valid_from, valid_until, ${offerStatusColumn(now)}, created_at, scam_report_count`;
}


// Every statement the store runs, prepared once per connection under its name.
export const queries = {
    // Totals are counters kept by triggers (migrations/postgres/commerce/001).
    listProducts: sql<PageParams, Paged<Priced<Product>>>('commerce.listProducts',
        paged(productColumns, 'products', 'SELECT products FROM catalogue_totals WHERE id = 1')),
    listProductsOfBusiness: sql<[...PageParams, string], Paged<Priced<Product>>>('commerce.listProductsOfBusiness',
        paged(productColumns, 'products WHERE business_id = $3', 'SELECT coalesce((SELECT product_count FROM businesses WHERE id = $3), 0)')),
    product: sql<[string], Priced<Product>>('commerce.product', `SELECT ${productColumns} FROM products WHERE id = $1`),
    // Product creation takes turns on the one counter row its trigger updates anyway, so that each new product's
    // created_at is read after the previous one's commit and sorts after it.
    lockCatalogue: sql<[], { id: number }>('commerce.lockCatalogue', 'SELECT id FROM catalogue_totals WHERE id = 1 FOR UPDATE'),
    productFacts: sql<[string], ProductFacts>('commerce.productFacts', `SELECT
        EXISTS (SELECT 1 FROM businesses WHERE id = $1) AS business,
        (SELECT created_at FROM products ORDER BY created_at DESC, id DESC LIMIT 1) AS latest,
        ${serverNow} AS now`),
    insertProduct: insertRow<Omit<Priced<Product>, 'scam_report_count'>, Priced<Product>>('commerce.insertProduct', 'products',
        ['id', 'name', 'description', 'price_minor', 'currency', 'business_id', 'created_by', 'created_at'], `RETURNING ${productColumns}`),

    listBusinesses: sql<PageParams, Paged<Business>>('commerce.listBusinesses', paged(businessColumns, 'businesses', 'SELECT count(*) FROM businesses')),
    business: sql<[string], Business>('commerce.business', `SELECT ${businessColumns} FROM businesses WHERE id = $1`),

    listOffers: sql<[...PageParams, string], Paged<Priced<Offer>>>('commerce.listOffers', paged(offerAt('$3'), 'offers', 'SELECT count(*) FROM offers')),
    listOffersOfProduct: sql<[...PageParams, string, string], Paged<Priced<Offer>>>('commerce.listOffersOfProduct',
        paged(offerAt('$4'), 'offers WHERE product_id = $3', 'SELECT count(*) FROM offers WHERE product_id = $3')),

    inquiryFacts: sql<[string | null, string | null], InquiryFacts>('commerce.inquiryFacts', `SELECT
        CASE WHEN $1::text IS NULL
            THEN EXISTS (SELECT 1 FROM businesses WHERE id = $2)
            ELSE EXISTS (SELECT 1 FROM products WHERE id = $1)
        END AS target,
        ${serverNow} AS now`),
    insertInquiry: insertRow<Inquiry, Inquiry>('commerce.insertInquiry', 'inquiries',
        ['id', 'product_id', 'business_id', 'message', 'owner_id', 'created_at'], `RETURNING ${inquiryColumns}`),
    inquiry: sql<[string, string], Inquiry>('commerce.inquiry', `SELECT ${inquiryColumns} FROM inquiries WHERE id = $1 AND owner_id = $2`),

    reportFacts: sql<[TargetType, string, string], ReportFacts>('commerce.reportFacts', `SELECT
        CASE $1::text
            WHEN 'product' THEN EXISTS (SELECT 1 FROM products WHERE id = $2)
            WHEN 'business' THEN EXISTS (SELECT 1 FROM businesses WHERE id = $2)
            ELSE EXISTS (SELECT 1 FROM offers WHERE id = $2)
        END AS target,
        EXISTS (SELECT 1 FROM scam_reports WHERE target_type = $1 AND target_id = $2 AND reporter_id = $3) AS reported,
        ${serverNow} AS now`),
    insertScamReport: insertRow<ScamReport, ScamReport>('commerce.insertScamReport', 'scam_reports',
        ['id', 'target_type', 'target_id', 'reason', 'reporter_id', 'created_at'], `RETURNING ${scamReportColumns}`),
    scamReport: sql<[string, string], ScamReport>('commerce.scamReport', `SELECT ${scamReportColumns} FROM scam_reports WHERE id = $1 AND reporter_id = $2`)
};


/** The commerce schema on PostgreSQL: listings, inquiries and scam reports. */
export class PgCommerceStore implements CommerceStore {

    private readonly events: PgEventWriter;

    constructor(private readonly db: PgDatabase, private readonly context: RecordContext) {

        this.events = eventWriter(db);
    }

    async listProducts(filter: { business_id?: string }, page: Page): Promise<ListResult<Product>> {

        const rows = filter.business_id === undefined ?
            await this.db.rows(queries.listProducts, page.limit, page.offset) :
            await this.db.rows(queries.listProductsOfBusiness, page.limit, page.offset, filter.business_id);

        return pageOf(rows, toProduct);
    }

    async getProduct(id: string): Promise<Product> {

        return toProduct(found(await this.db.row(queries.product, id), 'product'));
    }

    createProduct(input: NewProduct, createdBy: string): Promise<Product> {

        return this.events.writing(this.context, async (tx) => {

            await tx.row(queries.lockCatalogue);
            const facts = found(await tx.row(queries.productFacts, input.business_id), 'business');
            referenced(facts.business || undefined, 'business', 'business_id');
            const row = found(await tx.row(queries.insertProduct, {
                id: this.context.ids.next(),
                name: input.name,
                description: input.description,
                price_minor: toMinorUnits(input.price, input.currency),
                currency: input.currency,
                business_id: input.business_id,
                created_by: createdBy,
                created_at: createdAt(this.context.clock, facts.latest, facts.now)
            }), 'product');

            const product = toProduct(row);
            await this.events.write(tx, this.context, productCreatedEvent(product));
            return product;
        });
    }

    async listBusinesses(page: Page): Promise<ListResult<Business>> {

        return pageOf(await this.db.rows(queries.listBusinesses, page.limit, page.offset));
    }

    async getBusiness(id: string): Promise<Business> {

        return found(await this.db.row(queries.business, id), 'business');
    }

    async listOffers(filter: { product_id?: string }, page: Page): Promise<ListResult<Offer>> {

        const rows = filter.product_id === undefined ?
            await this.db.rows(queries.listOffers, page.limit, page.offset, this.now()) :
            await this.db.rows(queries.listOffersOfProduct, page.limit, page.offset, filter.product_id, this.now());

        return pageOf(rows, offerRecord);
    }

    createInquiry(input: NewInquiry, ownerId: string): Promise<Inquiry> {

        const productId = 'product_id' in input ? input.product_id : null;
        const businessId = 'business_id' in input ? input.business_id : null;
        return this.events.writing(this.context, async (tx) => {

            const facts = found(await tx.row(queries.inquiryFacts, productId, businessId), 'inquiry');
            referenced(facts.target || undefined, productId === null ? 'business' : 'product', productId === null ? 'business_id' : 'product_id');
            const inquiry = found(await tx.row(queries.insertInquiry, {
                id: this.context.ids.next(),
                product_id: productId,
                business_id: businessId,
                message: input.message,
                owner_id: ownerId,
                created_at: createdAt(this.context.clock, null, facts.now)
            }), 'inquiry');

            await this.events.write(tx, this.context, inquiryCreatedEvent(inquiry));
            return inquiry;
        });
    }

    async getInquiry(id: string, ownerId: string): Promise<Inquiry> {

        return found(await this.db.row(queries.inquiry, id, ownerId), 'inquiry');
    }

    createScamReport(input: NewScamReport, reporterId: string): Promise<ScamReport> {

        return this.events.writing(this.context, async (tx) => {

            const facts = found(await tx.row(queries.reportFacts, input.target_type, input.target_id, reporterId), 'scam_report');
            referenced(facts.target || undefined, input.target_type, 'target_id');
            checkFirstReport(input.target_type, facts.reported);
            const report = await this.insertScamReport(tx, {
                id: this.context.ids.next(),
                target_type: input.target_type,
                target_id: input.target_id,
                reason: input.reason,
                reporter_id: reporterId,
                created_at: createdAt(this.context.clock, null, facts.now)
            });

            // Read after the insert, under the row lock its trigger took to count the report: one report crosses.
            const business = report.target_type === 'business' ? await tx.row(queries.business, report.target_id) : undefined;
            for (const event of scamReportEvents(report, business)) {
                await this.events.write(tx, this.context, event);
            }

            return report;
        });
    }

    private async insertScamReport(tx: Runner, report: ScamReport): Promise<ScamReport> {

        try {
            return found(await tx.row(queries.insertScamReport, report), 'scam_report');
        }
        catch (err) {
            // A report of the same caller committed since the check: the unique index (its name is only ever on a
            // unique violation) refuses it as the rule would.
            if ((err as { constraint?: unknown }).constraint === 'scam_reports_one_per_reporter') {
                checkFirstReport(report.target_type, true);
            }

            throw err;
        }
    }

    async getScamReport(id: string, reporterId: string): Promise<ScamReport> {

        return found(await this.db.row(queries.scamReport, id, reporterId), 'scam_report');
    }

    // The store's clock as text, in the form records keep.
    private now(): string {

        return this.context.clock.now().toISOString();
    }
}


function toProduct(row: Priced<Product>): Product {

    return {
        id: row.id,
        name: row.name,
        description: row.description,
        price: fromMinorUnits(row.price_minor, row.currency),
        currency: row.currency,
        business_id: row.business_id,
        created_by: row.created_by,
        created_at: row.created_at,
        scam_report_count: row.scam_report_count
    };
}
