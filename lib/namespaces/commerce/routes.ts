import type { Request, Server, ServerRoute } from '@hapi/hapi';

import { callerId } from '../../auth';
import type { Namespace } from '../../namespace';
import { dataOf } from '../../scope';
import { createdResponse, listResponse, type Page } from '../../lists';
import {
    businessListQuery,
    businessListSchema,
    businessParams,
    businessSchema,
    inquiryParams,
    inquirySchema,
    newInquirySchema,
    newProductSchema,
    newScamReportSchema,
    offerListQuery,
    offerListSchema,
    productListQuery,
    productListSchema,
    productParams,
    productSchema,
    scamReportParams,
    scamReportSchema
} from './schemas';
import type { CommerceStore, NewInquiry, NewProduct, NewScamReport } from './store';


// What joi leaves in request.query once it has validated and converted it.
type ProductQuery = Page & { business_id?: string };

type OfferQuery = Page & { product_id?: string };

const tags = ['api', 'commerce'];

// Reading the catalogue needs no token; a token that is sent must be valid.
const optional = { mode: 'optional' } as const;

const listOrder = 'Oldest first (created_at, then id), so that paging with limit and offset never repeats or skips a record, even while records are added.';


/** The commerce endpoints, served from the store of each request's data set (the namespace's, as registered). */
export function commerceRoutes(server: Server, namespace: Namespace<CommerceStore>): void {

    // The commerce store of the request's data set.
    const commerceOf = (request: Pick<Request, 'app'>): CommerceStore => dataOf(request).store(namespace);

    const listProducts: ServerRoute<{ Query: ProductQuery }> = {
        method: 'GET',
        path: '/products',
        options: {
            auth: optional,
            description: 'List products, optionally of one business',
            notes: listOrder,
            tags,
            validate: { query: productListQuery },
            response: { status: { 200: productListSchema } },
            async handler(request, h) {

                const { business_id: businessId, limit, offset } = request.query;
                return listResponse(h, await commerceOf(request).listProducts({ business_id: businessId }, { limit, offset }));
            }
        }
    };

    const getProduct: ServerRoute<{ Params: { product_id: string } }> = {
        method: 'GET',
        path: '/products/{product_id}',
        options: {
            auth: optional,
            description: 'Get one product',
            tags,
            validate: { params: productParams },
            response: { status: { 200: productSchema } },
            handler: (request) => commerceOf(request).getProduct(request.params.product_id)
        }
    };

    const createProduct: ServerRoute<{ Payload: NewProduct }> = {
        method: 'POST',
        path: '/products',
        options: {
            description: 'Create a product of an existing business',
            notes: 'created_by is the caller\'s identity. An unknown business_id is a 422.',
            tags,
            validate: { payload: newProductSchema },
            response: { status: { 201: productSchema } },
            plugins: { localgate: { errors: { 400: 'a price with more decimals than its currency has (JPY 0, USD 2, KWD 3; code validation_failed naming price)', 422: 'business_not_found: business_id names no business' } } },
            async handler(request, h) {

                const product = await commerceOf(request).createProduct(request.payload, callerId(request));
                return createdResponse(h, request, product);
            }
        }
    };

    const listBusinesses: ServerRoute<{ Query: Page }> = {
        method: 'GET',
        path: '/businesses',
        options: {
            auth: optional,
            description: 'List the businesses of the town',
            notes: listOrder,
            tags,
            validate: { query: businessListQuery },
            response: { status: { 200: businessListSchema } },
            handler: async (request, h) => listResponse(h, await commerceOf(request).listBusinesses(request.query))
        }
    };

    const getBusiness: ServerRoute<{ Params: { business_id: string } }> = {
        method: 'GET',
        path: '/businesses/{business_id}',
        options: {
            auth: optional,
            description: 'Get one business',
            tags,
            validate: { params: businessParams },
            response: { status: { 200: businessSchema } },
            handler: (request) => commerceOf(request).getBusiness(request.params.business_id)
        }
    };

    const listOffers: ServerRoute<{ Query: OfferQuery }> = {
        method: 'GET',
        path: '/offers',
        options: {
            auth: optional,
            description: 'List offers, optionally of one product',
            notes: [listOrder, 'Each offer\'s status is the one of the data set\'s clock: valid before its valid_until, expired from then.'],
            tags,
            validate: { query: offerListQuery },
            response: { status: { 200: offerListSchema } },
            async handler(request, h) {

                const { product_id: productId, limit, offset } = request.query;
                return listResponse(h, await commerceOf(request).listOffers({ product_id: productId }, { limit, offset }));
            }
        }
    };

    const createInquiry: ServerRoute<{ Payload: NewInquiry }> = {
        method: 'POST',
        path: '/inquiries',
        options: {
            description: 'Send an inquiry about a product or a business',
            notes: 'Exactly one of product_id and business_id. The inquiry belongs to the caller. An unknown product or business is a 422.',
            tags,
            validate: { payload: newInquirySchema },
            response: { status: { 201: inquirySchema } },
            plugins: { localgate: { errors: { 422: 'product_not_found or business_not_found: the product_id or business_id names no record' } } },
            async handler(request, h) {

                const inquiry = await commerceOf(request).createInquiry(request.payload, callerId(request));
                return createdResponse(h, request, inquiry);
            }
        }
    };

    const getInquiry: ServerRoute<{ Params: { inquiry_id: string } }> = {
        method: 'GET',
        path: '/inquiries/{inquiry_id}',
        options: {
            description: 'Get one of the caller\'s inquiries',
            notes: 'Another caller\'s inquiry is a 404, like a missing one.',
            tags,
            validate: { params: inquiryParams },
            response: { status: { 200: inquirySchema } },
            handler: (request) => commerceOf(request).getInquiry(request.params.inquiry_id, callerId(request))
        }
    };

    const createScamReport: ServerRoute<{ Payload: NewScamReport }> = {
        method: 'POST',
        path: '/scam-reports',
        options: {
            description: 'Report a product, business or offer as a scam',
            notes: 'The reporter is the caller. One report per caller per target (409 on a repeat); an unknown target is a 422. The target\'s scam_report_count counts distinct reporters.',
            tags,
            validate: { payload: newScamReportSchema },
            response: { status: { 201: scamReportSchema } },
            plugins: {
                localgate: {
                    errors: {
                        409: 'duplicate_scam_report: the caller has already reported this target',
                        422: 'product_not_found, business_not_found or offer_not_found: target_id names no record of target_type'
                    }
                }
            },
            async handler(request, h) {

                const report = await commerceOf(request).createScamReport(request.payload, callerId(request));
                return createdResponse(h, request, report);
            }
        }
    };

    const getScamReport: ServerRoute<{ Params: { report_id: string } }> = {
        method: 'GET',
        path: '/scam-reports/{report_id}',
        options: {
            description: 'Get one of the caller\'s scam reports',
            notes: 'Another caller\'s report is a 404, like a missing one.',
            tags,
            validate: { params: scamReportParams },
            response: { status: { 200: scamReportSchema } },
            handler: (request) => commerceOf(request).getScamReport(request.params.report_id, callerId(request))
        }
    };

    // One by one: hapi types each route's request by its own query, params and payload.
    server.route(listProducts);
    server.route(getProduct);
    server.route(createProduct);
    server.route(listBusinesses);
    server.route(getBusiness);
    server.route(listOffers);
    server.route(createInquiry);
    server.route(getInquiry);
    server.route(createScamReport);
    server.route(getScamReport);
}
