import Code from '@hapi/code';
import type { ServerInjectResponse } from '@hapi/hapi';

import { body } from './server';


const { expect } = Code;


/** The one body every error answers with: Boom's shape, a stable code, and what a validation or pay error adds. */
export interface ErrorBody {
    statusCode: number;
    error: string;
    message: string;
    code: string;
    details?: { field: string; message: string }[];
    configured?: boolean;
    schema_ready?: boolean;
}

const errorKeys = ['statusCode', 'error', 'message', 'code', 'details', 'configured', 'schema_ready'];


/**
 * Asserts the status first, then that the body has the one error shape, with the code when given; with a field,
 * that the details name it and the message says what its detail says. Returns the body.
 */
export function expectError(res: ServerInjectResponse, status: number, code?: string, field?: string): ErrorBody {

    expect(res.statusCode, `${res.request.method.toUpperCase()} ${res.request.path}: ${res.payload}`).to.equal(status);
    const error = body<ErrorBody>(res);
    expect(Object.keys(error).filter((key) => !errorKeys.includes(key)), res.payload).to.equal([]);
    expect(error.statusCode).to.equal(status);
    expect(error.error).to.be.a.string();
    expect(error.message).to.be.a.string();
    expect(error.code).to.match(/^[a-z0-9_]+$/);
    if (code !== undefined) {
        expect(error.code).to.equal(code);
    }

    if (field !== undefined) {
        const detail = error.details?.find((item) => item.field === field);
        expect(detail, res.payload).to.exist();
        expect(error.message).to.contain(detail!.message);
    }

    return error;
}
