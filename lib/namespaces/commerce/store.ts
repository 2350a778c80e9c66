import Crypto from 'node:crypto';

import type { Statement } from 'better-sqlite3';

import type { Database } from '../../db';
import { DomainError } from '../../errors';
import type { ListResult, Page } from '../../lists';
import { found, nextCreatedAt, referenced, settled } from '../../store';
import { fromMinorUnits, toMinorUnits } from './money';


export const targetTypes = ['product', 'business', 'offer'] as const;

export type TargetType = typeof targetTypes[number];

export interface Product {
    id: string;
    name: string;
    description: string;
    price: number;
    currency: string;
    business_id: string;
    created_by: string;
    created_at: string;
    scam_report_count: number;
}

export interface Business {
    id: string;
    name: string;
    description: string;
    category: string;
    city: string;
    phone: string;
    created_at: string;
    scam_report_count: number;
}

export interface Offer {
    id: string;
    product_id: string;
    title: string;
    price: number;
    currency: string;
    valid_from: string;
    valid_until: string;
    created_at: string;
    scam_report_count: number;
}

export interface Inquiry {
    id: string;
    product_id: string | null;
    business_id: string | null;
    message: string;
    owner_id: string;
    created_at: string;
}

export interface ScamReport {
    id: string;
    target_type: TargetType;
    target_id: string;
    reason: string;
    reporter_id: string;
    created_at: string;
}

export interface NewProduct {
    name: string;
    description: string;
    price: number;
    currency: string;
    business_id: string;
}

// Exactly one of product_id and business_id; the route's validation guarantees it.
export type NewInquiry = { product_id: string; message: string } | { business_id: string; message: string };

export interface NewScamReport {
    target_type: TargetType;
    target_id: string;
    reason: string;
}

type Priced<T> = Omit<T, 'price'> & { price_minor: number };

// A product row as an array in productColumns order: better-sqlite3 builds arrays faster than objects, and a page
// holds up to 100 rows that are copied into records anyway.
type ProductRow = [id: string, name: string, description: string, priceMinor: number, currency: string, businessId: string, createdBy: string, createdAt: string, scamReportCount: number];

// A list that may be narrowed to the records of one parent (the products of a business, the offers of a product).
interface ListStatements<Row> {
    parentColumn: string;
    all: Statement<unknown[], Row>;
    countAll: Statement<unknown[], { total: number }>;
    ofParent: Statement<unknown[], Row>;
    countOfParent: Statement<unknown[], { total: number }>;
}


const productColumns = 'id, name, description, price_minor, currency, business_id, created_by, created_at, scam_report_count';
const businessColumns = 'id, name, description, category, city, phone, created_at, scam_report_count';
const offerColumns = 'id, product_id, title, price_minor, currency, valid_from, valid_until, created_at, scam_report_count';
const inquiryColumns = 'id, product_id, business_id, message, owner_id, created_at';
const scamReportColumns = 'id, target_type, target_id, reason, reporter_id, created_at';

// Every list is oldest first with the id breaking ties, served by an index on (filter, created_at, id).
// LIMIT and OFFSET take their parameters behind a unary plus: SQLite plans a bare LIMIT parameter with its bound value,
// and so prepares the statement again each time a new value is bound, that is on every call.
// Exported so that a test can show their query plans.
export const queries = {
    listProducts: `SELECT ${productColumns} FROM products ORDER BY created_at, id LIMIT +@limit OFFSET +@offset`,
    listProductsOfBusiness: `SELECT ${productColumns} FROM products WHERE business_id = @business_id ORDER BY created_at, id LIMIT +@limit OFFSET +@offset`,
    countProducts: 'SELECT products AS total FROM catalogue_totals WHERE id = 1',
    countProductsOfBusiness: 'SELECT coalesce((SELECT product_count FROM businesses WHERE id = ?), 0) AS total',
    latestProduct: 'SELECT max(created_at) AS latest FROM products',
    product: `SELECT ${productColumns} FROM products WHERE id = ?`,
    insertProduct: `INSERT INTO products (id, name, description, price_minor, currency, business_id, created_by, created_at)
        VALUES (@id, @name, @description, @price_minor, @currency, @business_id, @created_by, @created_at)`,

    listBusinesses: `SELECT ${businessColumns} FROM businesses ORDER BY created_at, id LIMIT +@limit OFFSET +@offset`,
    countBusinesses: 'SELECT count(*) AS total FROM businesses',
    business: `SELECT ${businessColumns} FROM businesses WHERE id = ?`,

    listOffers: `SELECT ${offerColumns} FROM offers ORDER BY created_at, id LIMIT +@limit OFFSET +@offset`,
    listOffersOfProduct: `SELECT ${offerColumns} FROM offers WHERE product_id = @product_id ORDER BY created_at, id LIMIT +@limit OFFSET +@offset`,
    countOffers: 'SELECT count(*) AS total FROM offers',
    countOffersOfProduct: 'SELECT count(*) AS total FROM offers WHERE product_id = ?',

    productExists: 'SELECT 1 AS found FROM products WHERE id = ?',
    businessExists: 'SELECT 1 AS found FROM businesses WHERE id = ?',
    offerExists: 'SELECT 1 AS found FROM offers WHERE id = ?',

    insertInquiry: `INSERT INTO inquiries (id, product_id, business_id, message, owner_id, created_at)
        VALUES (@id, @product_id, @business_id, @message, @owner_id, @created_at)`,
    inquiry: `SELECT ${inquiryColumns} FROM inquiries WHERE id = ? AND owner_id = ?`,

    scamReportByReporter: 'SELECT 1 AS found FROM scam_reports WHERE target_type = ? AND target_id = ? AND reporter_id = ?',
    insertScamReport: `INSERT INTO scam_reports (id, target_type, target_id, reason, reporter_id, created_at)
        VALUES (@id, @target_type, @target_id, @reason, @reporter_id, @created_at)`,
    scamReport: `SELECT ${scamReportColumns} FROM scam_reports WHERE id = ? AND reporter_id = ?`
} as const;


/** All commerce SQL: listings, inquiries and scam reports over one namespace database. */
export class CommerceStore {

    private readonly statements;
    private readonly exists: Record<TargetType, { get: (id: string) => unknown }>;
    private readonly readProducts;
    private readonly readBusinesses;
    private readonly readOffers;
    private readonly insertProduct;
    private readonly insertInquiry;
    private readonly insertScamReport;

    constructor(db: Database) {

        const prepare = <Row>(sql: string) => db.prepare<unknown[], Row>(sql);

        this.statements = {
            listProducts: prepare<ProductRow>(queries.listProducts).raw(),
            listProductsOfBusiness: prepare<ProductRow>(queries.listProductsOfBusiness).raw(),
            countProducts: prepare<{ total: number }>(queries.countProducts),
            countProductsOfBusiness: prepare<{ total: number }>(queries.countProductsOfBusiness),
            latestProduct: prepare<{ latest: string | null }>(queries.latestProduct),
            product: prepare<ProductRow>(queries.product).raw(),
            insertProduct: prepare(queries.insertProduct),
            listBusinesses: prepare<Business>(queries.listBusinesses),
            countBusinesses: prepare<{ total: number }>(queries.countBusinesses),
            business: prepare<Business>(queries.business),
            listOffers: prepare<Priced<Offer>>(queries.listOffers),
            listOffersOfProduct: prepare<Priced<Offer>>(queries.listOffersOfProduct),
            countOffers: prepare<{ total: number }>(queries.countOffers),
            countOffersOfProduct: prepare<{ total: number }>(queries.countOffersOfProduct),
            insertInquiry: prepare(queries.insertInquiry),
            inquiry: prepare<Inquiry>(queries.inquiry),
            scamReportByReporter: prepare(queries.scamReportByReporter),
            insertScamReport: prepare(queries.insertScamReport),
            scamReport: prepare<ScamReport>(queries.scamReport)
        };

        this.exists = {
            product: prepare(queries.productExists),
            business: prepare(queries.businessExists),
            offer: prepare(queries.offerExists)
        };

        const statements = this.statements;

        // Each page and its total come from one read transaction, so they agree.
        const products: ListStatements<ProductRow> = {
            parentColumn: 'business_id',
            all: statements.listProducts,
            countAll: statements.countProducts,
            ofParent: statements.listProductsOfBusiness,
            countOfParent: statements.countProductsOfBusiness
        };

        this.readProducts = db.transaction((filter: { business_id?: string }, page: Page): ListResult<Product> => {

            const { rows, total } = readPage(products, filter.business_id, page);
            return { data: rows.map(toProduct), total };
        });

        this.readBusinesses = db.transaction((page: Page): ListResult<Business> => ({
            data: statements.listBusinesses.all(page),
            total: statements.countBusinesses.get()!.total
        }));

        const offers: ListStatements<Priced<Offer>> = {
            parentColumn: 'product_id',
            all: statements.listOffers,
            countAll: statements.countOffers,
            ofParent: statements.listOffersOfProduct,
            countOfParent: statements.countOffersOfProduct
        };

        this.readOffers = db.transaction((filter: { product_id?: string }, page: Page): ListResult<Offer> => {

            const { rows, total } = readPage(offers, filter.product_id, page);
            return { data: rows.map(toOffer), total };
        });

        this.insertProduct = db.transaction((input: NewProduct, createdBy: string) => {

            this.requireTarget('business', input.business_id, 'business_id');
            const id = Crypto.randomUUID();
            statements.insertProduct.run({
                id,
                name: input.name,
                description: input.description,
                price_minor: toMinorUnits(input.price, input.currency),
                currency: input.currency,
                business_id: input.business_id,
                created_by: createdBy,
                created_at: nextCreatedAt(statements.latestProduct.get()!.latest)
            });

            return statements.product.get(id)!;
        });

        this.insertInquiry = db.transaction((input: NewInquiry, ownerId: string) => {

            if ('product_id' in input) {
                this.requireTarget('product', input.product_id, 'product_id');
            }
            else {
                this.requireTarget('business', input.business_id, 'business_id');
            }

            const id = Crypto.randomUUID();
            const created = { id, product_id: null, business_id: null, ...input, owner_id: ownerId, created_at: new Date().toISOString() };
            statements.insertInquiry.run(created);
            return statements.inquiry.get(id, ownerId)!;
        });

        this.insertScamReport = db.transaction((input: NewScamReport, reporterId: string) => {

            this.requireTarget(input.target_type, input.target_id, 'target_id');
            if (statements.scamReportByReporter.get(input.target_type, input.target_id, reporterId)) {
                throw new DomainError('conflict', 'duplicate_scam_report', `You have already reported this ${input.target_type}: one report per caller per target`);
            }

            const id = Crypto.randomUUID();
            statements.insertScamReport.run({ id, ...input, reporter_id: reporterId, created_at: new Date().toISOString() });
            return statements.scamReport.get(id, reporterId)!;
        });
    }

    /** One page of products, oldest first, optionally only those of one business. */
    listProducts(filter: { business_id?: string }, page: Page): Promise<ListResult<Product>> {

        return settled(() => this.readProducts.deferred(filter, page));
    }

    /** One product by id. */
    getProduct(id: string): Promise<Product> {

        return settled(() => toProduct(found(this.statements.product.get(id), 'product', noRecord('product', id))));
    }

    /** Creates a product of an existing business on behalf of the caller. */
    createProduct(input: NewProduct, createdBy: string): Promise<Product> {

        return settled(() => toProduct(this.insertProduct.immediate(input, createdBy)));
    }

    /** One page of businesses, oldest first. */
    listBusinesses(page: Page): Promise<ListResult<Business>> {

        return settled(() => this.readBusinesses.deferred(page));
    }

    /** One business by id. */
    getBusiness(id: string): Promise<Business> {

        return settled(() => found(this.statements.business.get(id), 'business', noRecord('business', id)));
    }

    /** One page of offers, oldest first, optionally only those of one product. */
    listOffers(filter: { product_id?: string }, page: Page): Promise<ListResult<Offer>> {

        return settled(() => this.readOffers.deferred(filter, page));
    }

    /** Records a buyer's inquiry about an existing product or business. */
    createInquiry(input: NewInquiry, ownerId: string): Promise<Inquiry> {

        return settled(() => this.insertInquiry.immediate(input, ownerId));
    }

    /** One inquiry of the caller; another caller's inquiry is as unknown as a missing one. */
    getInquiry(id: string, ownerId: string): Promise<Inquiry> {

        return settled(() => found(this.statements.inquiry.get(id, ownerId), 'inquiry', noRecord('inquiry', id)));
    }

    /** Records the caller's scam report on an existing target, at most one per caller and target. */
    createScamReport(input: NewScamReport, reporterId: string): Promise<ScamReport> {

        return settled(() => this.insertScamReport.immediate(input, reporterId));
    }

    /** One scam report of the caller; another caller's report is as unknown as a missing one. */
    getScamReport(id: string, reporterId: string): Promise<ScamReport> {

        return settled(() => found(this.statements.scamReport.get(id, reporterId), 'scam_report', noRecord('scam report', id)));
    }

    private requireTarget(type: TargetType, id: string, field: string): void {

        referenced(this.exists[type].get(id), type, field, `${field} refers to no existing ${type}: ${JSON.stringify(id)}`);
    }
}


/** One page of a list, of one parent when its id is given, and the total it is a page of. */
function readPage<Row>(list: ListStatements<Row>, parentId: string | undefined, page: Page): { rows: Row[]; total: number } {

    if (parentId === undefined) {
        return { rows: list.all.all(page), total: list.countAll.get()!.total };
    }

    return { rows: list.ofParent.all({ ...page, [list.parentColumn]: parentId }), total: list.countOfParent.get(parentId)!.total };
}


function noRecord(kind: string, id: string): string {

    return `There is no ${kind} with id ${JSON.stringify(id)}`;
}


function toProduct([id, name, description, priceMinor, currency, businessId, createdBy, createdAt, scamReportCount]: ProductRow): Product {

    return {
        id,
        name,
        description,
        price: fromMinorUnits(priceMinor, currency),
        currency,
        business_id: businessId,
        created_by: createdBy,
        created_at: createdAt,
        scam_report_count: scamReportCount
    };
}


function toOffer(row: Priced<Offer>): Offer {

    return {
        id: row.id,
        product_id: row.product_id,
        title: row.title,
        price: fromMinorUnits(row.price_minor, row.currency),
        currency: row.currency,
        valid_from: row.valid_from,
        valid_until: row.valid_until,
        created_at: row.created_at,
        scam_report_count: row.scam_report_count
    };
}

