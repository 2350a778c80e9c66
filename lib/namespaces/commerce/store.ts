import type { ListResult, Page } from '../../lists';


export const targetTypes = ['product', 'business', 'offer'] as const;

export type TargetType = typeof targetTypes[number];

/** Valid until valid_until, expired from then. */
export const offerStatuses = ['valid', 'expired'] as const;

export type OfferStatus = typeof offerStatuses[number];

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
    status: OfferStatus;
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


/**
 * The commerce namespace as the routes see it, whatever engine keeps it. An offer read shows the status of the store's
 * clock: its end is read off the clock, never stored by the timeline.
 */
export interface CommerceStore {

    /** One page of products, oldest first, optionally only those of one business. */
    listProducts(filter: { business_id?: string }, page: Page): Promise<ListResult<Product>>;

    /** One product by id; product_not_found when there is none. */
    getProduct(id: string): Promise<Product>;

    /** Creates a product of an existing business on behalf of the caller. */
    createProduct(input: NewProduct, createdBy: string): Promise<Product>;

    /** One page of businesses, oldest first. */
    listBusinesses(page: Page): Promise<ListResult<Business>>;

    /** One business by id; business_not_found when there is none. */
    getBusiness(id: string): Promise<Business>;

    /** One page of offers, oldest first, optionally only those of one product. */
    listOffers(filter: { product_id?: string }, page: Page): Promise<ListResult<Offer>>;

    /** Records a buyer's inquiry about an existing product or business. */
    createInquiry(input: NewInquiry, ownerId: string): Promise<Inquiry>;

    /** One inquiry of the caller; another caller's inquiry is as unknown as a missing one. */
    getInquiry(id: string, ownerId: string): Promise<Inquiry>;

    /** Records the caller's scam report on an existing target, at most one per caller and target. */
    createScamReport(input: NewScamReport, reporterId: string): Promise<ScamReport>;

    /** One scam report of the caller; another caller's report is as unknown as a missing one. */
    getScamReport(id: string, reporterId: string): Promise<ScamReport>;
}
