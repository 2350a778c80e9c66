-- Timestamps are stored in one fixed form (2030-06-01T10:00:00.000Z) so that comparing them as text
-- compares them in time: every list is ordered by (created_at, id), oldest first.
-- Prices are integer minor units of their currency (cents, yen, fils); the API converts them to and
-- from decimal amounts using the currency's ISO 4217 digits, so no amount is ever rounded in storage.
-- scam_report_count and product_count are counters kept by the triggers at the end of this file, in
-- the same transaction as the write that changes them, so lists read them instead of counting.

CREATE TABLE businesses (
    id TEXT PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 100),
    name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    description TEXT NOT NULL DEFAULT '' CHECK (length(description) <= 5000),
    category TEXT NOT NULL CHECK (length(category) BETWEEN 1 AND 100),
    city TEXT NOT NULL CHECK (length(city) BETWEEN 1 AND 100),
    phone TEXT NOT NULL CHECK (length(phone) BETWEEN 1 AND 50),
    created_at TEXT NOT NULL CHECK (created_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'),
    scam_report_count INTEGER NOT NULL DEFAULT 0 CHECK (scam_report_count >= 0),
    product_count INTEGER NOT NULL DEFAULT 0 CHECK (product_count >= 0)
) STRICT;

CREATE INDEX businesses_by_created ON businesses (created_at, id);


CREATE TABLE products (
    id TEXT PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 100),
    business_id TEXT NOT NULL REFERENCES businesses (id),
    name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    description TEXT NOT NULL DEFAULT '' CHECK (length(description) <= 5000),
    price_minor INTEGER NOT NULL CHECK (price_minor BETWEEN 0 AND 1000000000000000),
    currency TEXT NOT NULL CHECK (currency GLOB '[A-Z][A-Z][A-Z]'),
    created_by TEXT NOT NULL CHECK (length(created_by) > 0),
    created_at TEXT NOT NULL CHECK (created_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'),
    scam_report_count INTEGER NOT NULL DEFAULT 0 CHECK (scam_report_count >= 0)
) STRICT;

-- The unfiltered list and the business_id list, each in list order.
CREATE INDEX products_by_created ON products (created_at, id);
CREATE INDEX products_by_business ON products (business_id, created_at, id);


CREATE TABLE offers (
    id TEXT PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 100),
    product_id TEXT NOT NULL REFERENCES products (id),
    title TEXT NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
    price_minor INTEGER NOT NULL CHECK (price_minor BETWEEN 0 AND 1000000000000000),
    currency TEXT NOT NULL CHECK (currency GLOB '[A-Z][A-Z][A-Z]'),
    valid_from TEXT NOT NULL CHECK (valid_from GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'),
    valid_until TEXT NOT NULL CHECK (valid_until GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'),
    created_at TEXT NOT NULL CHECK (created_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'),
    scam_report_count INTEGER NOT NULL DEFAULT 0 CHECK (scam_report_count >= 0),
    CHECK (valid_until > valid_from)
) STRICT;

-- The unfiltered list and the product_id list, each in list order.
CREATE INDEX offers_by_created ON offers (created_at, id);
CREATE INDEX offers_by_product ON offers (product_id, created_at, id);


-- An inquiry is about exactly one product or one business.
CREATE TABLE inquiries (
    id TEXT PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 100),
    product_id TEXT REFERENCES products (id),
    business_id TEXT REFERENCES businesses (id),
    message TEXT NOT NULL CHECK (length(message) BETWEEN 1 AND 2000),
    owner_id TEXT NOT NULL CHECK (length(owner_id) > 0),
    created_at TEXT NOT NULL CHECK (created_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'),
    CHECK ((product_id IS NULL) <> (business_id IS NULL))
) STRICT;


CREATE TABLE scam_reports (
    id TEXT PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 100),
    target_type TEXT NOT NULL CHECK (target_type IN ('product', 'business', 'offer')),
    target_id TEXT NOT NULL CHECK (length(target_id) BETWEEN 1 AND 100),
    reason TEXT NOT NULL CHECK (length(reason) BETWEEN 1 AND 2000),
    reporter_id TEXT NOT NULL CHECK (length(reporter_id) > 0),
    created_at TEXT NOT NULL CHECK (created_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z')
) STRICT;

-- One report per reporter per target; the same index serves the duplicate check.
CREATE UNIQUE INDEX scam_reports_one_per_reporter ON scam_reports (target_type, target_id, reporter_id);


-- The number of products, so that the unfiltered list's total does not grow with the table.
CREATE TABLE catalogue_totals (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    products INTEGER NOT NULL CHECK (products >= 0)
) STRICT;

INSERT INTO catalogue_totals (id, products) VALUES (1, 0);


CREATE TRIGGER products_counted AFTER INSERT ON products
BEGIN
    UPDATE businesses SET product_count = product_count + 1 WHERE id = NEW.business_id;
    UPDATE catalogue_totals SET products = products + 1 WHERE id = 1;
END;

CREATE TRIGGER products_uncounted AFTER DELETE ON products
BEGIN
    UPDATE businesses SET product_count = product_count - 1 WHERE id = OLD.business_id;
    UPDATE catalogue_totals SET products = products - 1 WHERE id = 1;
END;

CREATE TRIGGER products_moved AFTER UPDATE OF business_id ON products
BEGIN
    UPDATE businesses SET product_count = product_count - 1 WHERE id = OLD.business_id;
    UPDATE businesses SET product_count = product_count + 1 WHERE id = NEW.business_id;
END;

-- Each report row is a distinct reporter (the unique constraint), so counting rows counts reporters.
CREATE TRIGGER scam_reports_counted AFTER INSERT ON scam_reports
BEGIN
    UPDATE products SET scam_report_count = scam_report_count + 1 WHERE NEW.target_type = 'product' AND id = NEW.target_id;
    UPDATE businesses SET scam_report_count = scam_report_count + 1 WHERE NEW.target_type = 'business' AND id = NEW.target_id;
    UPDATE offers SET scam_report_count = scam_report_count + 1 WHERE NEW.target_type = 'offer' AND id = NEW.target_id;
END;

CREATE TRIGGER scam_reports_uncounted AFTER DELETE ON scam_reports
BEGIN
    UPDATE products SET scam_report_count = scam_report_count - 1 WHERE OLD.target_type = 'product' AND id = OLD.target_id;
    UPDATE businesses SET scam_report_count = scam_report_count - 1 WHERE OLD.target_type = 'business' AND id = OLD.target_id;
    UPDATE offers SET scam_report_count = scam_report_count - 1 WHERE OLD.target_type = 'offer' AND id = OLD.target_id;
END;
