-- The PostgreSQL twin of migrations/sqlite/commerce/001: the same tables, checks, indexes and counters.
-- Timestamps are stored as text in one fixed form (2030-06-01T10:00:00.000Z) so that comparing them as text
-- compares them in time, and so that they read back byte for byte as on SQLite: every list is ordered by
-- (created_at, id), oldest first. Ids and timestamps sort with COLLATE "C", SQLite's binary order.
-- Prices are integer minor units of their currency (cents, yen, fils); the API converts them to and
-- from decimal amounts using the currency's ISO 4217 digits, so no amount is ever rounded in storage.
-- scam_report_count and product_count are counters kept by the triggers at the end of this file, in
-- the same transaction as the write that changes them, so lists read them instead of counting.

CREATE TABLE businesses (
    id text COLLATE "C" PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 100),
    name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    description text NOT NULL DEFAULT '' CHECK (length(description) <= 5000),
    category text NOT NULL CHECK (length(category) BETWEEN 1 AND 100),
    city text NOT NULL CHECK (length(city) BETWEEN 1 AND 100),
    phone text NOT NULL CHECK (length(phone) BETWEEN 1 AND 50),
    created_at text COLLATE "C" NOT NULL CHECK (created_at ~ '^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$'),
    scam_report_count integer NOT NULL DEFAULT 0 CHECK (scam_report_count >= 0),
    product_count integer NOT NULL DEFAULT 0 CHECK (product_count >= 0)
);

CREATE INDEX businesses_by_created ON businesses (created_at, id);


CREATE TABLE products (
    id text COLLATE "C" PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 100),
    business_id text COLLATE "C" NOT NULL REFERENCES businesses (id),
    name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    description text NOT NULL DEFAULT '' CHECK (length(description) <= 5000),
    price_minor bigint NOT NULL CHECK (price_minor BETWEEN 0 AND 1000000000000000),
    currency text COLLATE "C" NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    created_by text NOT NULL CHECK (length(created_by) > 0),
    created_at text COLLATE "C" NOT NULL CHECK (created_at ~ '^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$'),
    scam_report_count integer NOT NULL DEFAULT 0 CHECK (scam_report_count >= 0)
);

-- The unfiltered list and the business_id list, each in list order.
CREATE INDEX products_by_created ON products (created_at, id);
CREATE INDEX products_by_business ON products (business_id, created_at, id);


CREATE TABLE offers (
    id text COLLATE "C" PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 100),
    product_id text COLLATE "C" NOT NULL REFERENCES products (id),
    title text NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
    price_minor bigint NOT NULL CHECK (price_minor BETWEEN 0 AND 1000000000000000),
    currency text COLLATE "C" NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    valid_from text COLLATE "C" NOT NULL CHECK (valid_from ~ '^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$'),
    valid_until text COLLATE "C" NOT NULL CHECK (valid_until ~ '^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$'),
    created_at text COLLATE "C" NOT NULL CHECK (created_at ~ '^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$'),
    scam_report_count integer NOT NULL DEFAULT 0 CHECK (scam_report_count >= 0),
    CHECK (valid_until > valid_from)
);

-- The unfiltered list and the product_id list, each in list order.
CREATE INDEX offers_by_created ON offers (created_at, id);
CREATE INDEX offers_by_product ON offers (product_id, created_at, id);


-- An inquiry is about exactly one product or one business.
CREATE TABLE inquiries (
    id text COLLATE "C" PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 100),
    product_id text COLLATE "C" REFERENCES products (id),
    business_id text COLLATE "C" REFERENCES businesses (id),
    message text NOT NULL CHECK (length(message) BETWEEN 1 AND 2000),
    owner_id text COLLATE "C" NOT NULL CHECK (length(owner_id) > 0),
    created_at text COLLATE "C" NOT NULL CHECK (created_at ~ '^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$'),
    CHECK ((product_id IS NULL) <> (business_id IS NULL))
);


CREATE TABLE scam_reports (
    id text COLLATE "C" PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 100),
    target_type text COLLATE "C" NOT NULL CHECK (target_type IN ('product', 'business', 'offer')),
    target_id text COLLATE "C" NOT NULL CHECK (length(target_id) BETWEEN 1 AND 100),
    reason text NOT NULL CHECK (length(reason) BETWEEN 1 AND 2000),
    reporter_id text COLLATE "C" NOT NULL CHECK (length(reporter_id) > 0),
    created_at text COLLATE "C" NOT NULL CHECK (created_at ~ '^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$')
);

-- One report per reporter per target; the same index serves the duplicate check, and its name tells the store
-- which unique violation is a duplicate report.
CREATE UNIQUE INDEX scam_reports_one_per_reporter ON scam_reports (target_type, target_id, reporter_id);


-- The number of products, so that the unfiltered list's total does not grow with the table.
CREATE TABLE catalogue_totals (
    id integer PRIMARY KEY CHECK (id = 1),
    products integer NOT NULL CHECK (products >= 0)
);

INSERT INTO catalogue_totals (id, products) VALUES (1, 0);


CREATE FUNCTION products_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE businesses SET product_count = product_count + 1 WHERE id = NEW.business_id;
        UPDATE catalogue_totals SET products = products + 1 WHERE id = 1;
    ELSIF TG_OP = 'DELETE' THEN
        UPDATE businesses SET product_count = product_count - 1 WHERE id = OLD.business_id;
        UPDATE catalogue_totals SET products = products - 1 WHERE id = 1;
    ELSE
        UPDATE businesses SET product_count = product_count - 1 WHERE id = OLD.business_id;
        UPDATE businesses SET product_count = product_count + 1 WHERE id = NEW.business_id;
    END IF;
    RETURN NULL;
END;
$$;

CREATE TRIGGER products_counted AFTER INSERT ON products FOR EACH ROW EXECUTE FUNCTION products_count();
CREATE TRIGGER products_uncounted AFTER DELETE ON products FOR EACH ROW EXECUTE FUNCTION products_count();
CREATE TRIGGER products_moved AFTER UPDATE OF business_id ON products FOR EACH ROW EXECUTE FUNCTION products_count();


-- Each report row is a distinct reporter (the unique constraint), so counting rows counts reporters.
CREATE FUNCTION scam_reports_count() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    report scam_reports;
    step integer;
BEGIN
    IF TG_OP = 'INSERT' THEN
        report := NEW;
        step := 1;
    ELSE
        report := OLD;
        step := -1;
    END IF;

    IF report.target_type = 'product' THEN
        UPDATE products SET scam_report_count = scam_report_count + step WHERE id = report.target_id;
    ELSIF report.target_type = 'business' THEN
        UPDATE businesses SET scam_report_count = scam_report_count + step WHERE id = report.target_id;
    ELSE
        UPDATE offers SET scam_report_count = scam_report_count + step WHERE id = report.target_id;
    END IF;
    RETURN NULL;
END;
$$;

CREATE TRIGGER scam_reports_counted AFTER INSERT ON scam_reports FOR EACH ROW EXECUTE FUNCTION scam_reports_count();
CREATE TRIGGER scam_reports_uncounted AFTER DELETE ON scam_reports FOR EACH ROW EXECUTE FUNCTION scam_reports_count();
