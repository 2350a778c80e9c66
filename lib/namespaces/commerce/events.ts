import { businessSchema, inquirySchema, productSchema, scamReportSchema } from './schemas';


/** What commerce's changes announce: each event's data is the record as the API answers with it. */
export const commerceEventTypes = {
    'commerce.product.created': { description: 'A product was created: the product as GET /v1/commerce/products/{product_id} reads it', data: productSchema },
    'commerce.inquiry.created': { description: 'An inquiry was sent: the inquiry as its sender reads it', data: inquirySchema },
    'commerce.scam_report.created': { description: 'A product, business or offer was reported as a scam: the report as its reporter reads it', data: scamReportSchema },
    'commerce.business.flagged': { description: 'A business got its first scam report, after that report\'s own event: the business as GET /v1/commerce/businesses/{business_id} reads it, its count raised', data: businessSchema }
};
