import type { EventTypeSpec } from '../../namespace';
import type { AnnouncedEvent } from '../../storage/events-sql';
import { crossesFlagged } from './rules';
import { businessSchema, inquirySchema, productSchema, scamReportSchema } from './schemas';
import type { Business, Inquiry, Product, ScamReport } from './store';


// What commerce's changes announce, decided here once for both engines: a store persists the events these functions
// answer.

/** The record each of commerce's event types carries. */
interface CommerceEventData {
    'commerce.product.created': Product;
    'commerce.inquiry.created': Inquiry;
    'commerce.scam_report.created': ScamReport;
    'commerce.business.flagged': Business;
}

/** An event commerce announces. */
export type CommerceEvent = AnnouncedEvent<CommerceEventData>;


/** What commerce's changes announce: each event's data is the record as the API answers with it. */
export const commerceEventTypes = {
    'commerce.product.created': { description: 'A product was created: the product as GET /v1/commerce/products/{product_id} reads it', data: productSchema },
    'commerce.inquiry.created': { description: 'An inquiry was sent: the inquiry as its sender reads it', data: inquirySchema },
    'commerce.scam_report.created': { description: 'A product, business or offer was reported as a scam: the report as its reporter reads it', data: scamReportSchema },
    'commerce.business.flagged': { description: 'A business got its first scam report, after that report\'s own event: the business as GET /v1/commerce/businesses/{business_id} reads it, its count raised', data: businessSchema }
} satisfies Record<keyof CommerceEventData, EventTypeSpec>;


/** What a product made announces: the product as its GET reads it, at its created_at. */
export function productCreatedEvent(product: Product): CommerceEvent {

    return { type: 'commerce.product.created', created_at: product.created_at, data: product };
}


/** What an inquiry sent announces: the inquiry as its sender reads it, at its created_at. */
export function inquiryCreatedEvent(inquiry: Inquiry): CommerceEvent {

    return { type: 'commerce.inquiry.created', created_at: inquiry.created_at, data: inquiry };
}


/**
 * What a scam report announces: the report, and after it, when the report is of a business and its count (read after
 * the report was counted) crosses into flagged, the business, both at the report's created_at. `business` is the
 * reported business as its GET reads it; undefined for a report of a product or an offer.
 */
export function scamReportEvents(report: ScamReport, business: Business | undefined): CommerceEvent[] {

    const created: CommerceEvent = { type: 'commerce.scam_report.created', created_at: report.created_at, data: report };
    if (!business || !crossesFlagged(business.scam_report_count)) {
        return [created];
    }

    return [created, { type: 'commerce.business.flagged', created_at: report.created_at, data: business }];
}
