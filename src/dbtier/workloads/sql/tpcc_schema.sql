-- TPC-C-like schema (nine tables, TPC-C column names). Indexes are created after
-- the load, in the index tablespace when one is placed: see tpcc_indexes.sql.
CREATE TABLE warehouse (
  w_id int NOT NULL, w_name varchar(10), w_street_1 varchar(20), w_street_2 varchar(20), w_city varchar(20),
  w_state char(2), w_zip char(9), w_tax numeric(4,4), w_ytd numeric(12,2));
CREATE TABLE district (
  d_id int NOT NULL, d_w_id int NOT NULL, d_name varchar(10), d_street_1 varchar(20), d_street_2 varchar(20),
  d_city varchar(20), d_state char(2), d_zip char(9), d_tax numeric(4,4), d_ytd numeric(12,2), d_next_o_id int);
CREATE TABLE customer (
  c_id int NOT NULL, c_d_id int NOT NULL, c_w_id int NOT NULL, c_first varchar(16), c_middle char(2),
  c_last varchar(16), c_street_1 varchar(20), c_street_2 varchar(20), c_city varchar(20), c_state char(2),
  c_zip char(9), c_phone char(16), c_since timestamp, c_credit char(2), c_credit_lim numeric(12,2),
  c_discount numeric(4,4), c_balance numeric(12,2), c_ytd_payment numeric(12,2), c_payment_cnt int,
  c_delivery_cnt int, c_data varchar(500));
CREATE TABLE history (
  h_c_id int, h_c_d_id int, h_c_w_id int, h_d_id int, h_w_id int, h_date timestamp, h_amount numeric(6,2),
  h_data varchar(24));
CREATE TABLE orders (
  o_id int NOT NULL, o_d_id int NOT NULL, o_w_id int NOT NULL, o_c_id int, o_entry_d timestamp,
  o_carrier_id int, o_ol_cnt int, o_all_local int);
CREATE TABLE new_order (no_o_id int NOT NULL, no_d_id int NOT NULL, no_w_id int NOT NULL);
CREATE TABLE order_line (
  ol_o_id int NOT NULL, ol_d_id int NOT NULL, ol_w_id int NOT NULL, ol_number int NOT NULL, ol_i_id int,
  ol_supply_w_id int, ol_delivery_d timestamp, ol_quantity int, ol_amount numeric(6,2), ol_dist_info char(24));
CREATE TABLE item (i_id int NOT NULL, i_im_id int, i_name varchar(24), i_price numeric(5,2), i_data varchar(50));
CREATE TABLE stock (
  s_i_id int NOT NULL, s_w_id int NOT NULL, s_quantity int, s_dist_01 char(24), s_dist_02 char(24),
  s_dist_03 char(24), s_dist_04 char(24), s_dist_05 char(24), s_dist_06 char(24), s_dist_07 char(24),
  s_dist_08 char(24), s_dist_09 char(24), s_dist_10 char(24), s_ytd int, s_order_cnt int, s_remote_cnt int,
  s_data varchar(50));

-- TPC-C's last names: three syllables from the digits of a number 0..999.
CREATE FUNCTION tpcc_lastname(n int) RETURNS varchar LANGUAGE sql IMMUTABLE AS $$
  SELECT (ARRAY['BAR','OUGHT','ABLE','PRI','PRES','ESE','ANTI','CALLY','ATION','EING'])[n / 100 + 1]
      || (ARRAY['BAR','OUGHT','ABLE','PRI','PRES','ESE','ANTI','CALLY','ATION','EING'])[(n / 10) % 10 + 1]
      || (ARRAY['BAR','OUGHT','ABLE','PRI','PRES','ESE','ANTI','CALLY','ATION','EING'])[n % 10 + 1]
$$;

-- NURand(A, x, y) of TPC-C clause 2.1.6, with C = 0.
CREATE FUNCTION tpcc_nurand(a int, x int, y int) RETURNS int LANGUAGE sql VOLATILE AS $$
  SELECT (((floor(random() * (a + 1))::int | (x + floor(random() * (y - x + 1))::int))) % (y - x + 1)) + x
$$;

CREATE FUNCTION tpcc_rstr(n int) RETURNS varchar LANGUAGE sql VOLATILE AS $$
  SELECT substr(repeat(md5(random()::text), (n / 32) + 1), 1, n)
$$;

CREATE FUNCTION tpcc_load_items() RETURNS void LANGUAGE sql AS $$
  INSERT INTO item
  SELECT i, 1 + floor(random() * 10000)::int, tpcc_rstr(14 + floor(random() * 10)::int),
         (1 + random() * 99)::numeric(5,2),
         CASE WHEN random() < 0.1 THEN 'ORIGINAL' || tpcc_rstr(30) ELSE tpcc_rstr(38) END
  FROM generate_series(1, 100000) i;
$$;

-- One warehouse with TPC-C's initial cardinalities (clause 4.3.3.1).
CREATE FUNCTION tpcc_load_warehouse(w int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO warehouse VALUES (w, tpcc_rstr(8), tpcc_rstr(15), tpcc_rstr(15), tpcc_rstr(15), 'CA', '123451111',
                                (random() * 0.2)::numeric(4,4), 300000);
  INSERT INTO district
  SELECT d, w, tpcc_rstr(8), tpcc_rstr(15), tpcc_rstr(15), tpcc_rstr(15), 'CA', '123451111',
         (random() * 0.2)::numeric(4,4), 30000, 3001
  FROM generate_series(1, 10) d;
  INSERT INTO stock
  SELECT i, w, 10 + floor(random() * 91)::int, tpcc_rstr(24), tpcc_rstr(24), tpcc_rstr(24), tpcc_rstr(24),
         tpcc_rstr(24), tpcc_rstr(24), tpcc_rstr(24), tpcc_rstr(24), tpcc_rstr(24), tpcc_rstr(24), 0, 0, 0,
         CASE WHEN random() < 0.1 THEN 'ORIGINAL' || tpcc_rstr(30) ELSE tpcc_rstr(38) END
  FROM generate_series(1, 100000) i;
  INSERT INTO customer
  SELECT c, d, w, tpcc_rstr(12), 'OE',
         tpcc_lastname(CASE WHEN c <= 1000 THEN c - 1 ELSE tpcc_nurand(255, 0, 999) END),
         tpcc_rstr(15), tpcc_rstr(15), tpcc_rstr(15), 'CA', '123451111', '0123456789012345', now(),
         CASE WHEN random() < 0.1 THEN 'BC' ELSE 'GC' END, 50000, (random() * 0.5)::numeric(4,4), -10, 10, 1, 0,
         tpcc_rstr(300)
  FROM generate_series(1, 10) d, generate_series(1, 3000) c;
  INSERT INTO history
  SELECT c, d, w, d, w, now(), 10, tpcc_rstr(20)
  FROM generate_series(1, 10) d, generate_series(1, 3000) c;
  -- orders: customers in a random permutation per district; the last 900 are undelivered
  INSERT INTO orders
  SELECT o, d, w, c, now(), CASE WHEN o < 2101 THEN 1 + floor(random() * 10)::int END,
         5 + floor(random() * 11)::int, 1
  FROM generate_series(1, 10) d,
       LATERAL (SELECT row_number() OVER (ORDER BY random())::int AS o, c FROM generate_series(1, 3000) c) p;
  INSERT INTO new_order SELECT o_id, o_d_id, o_w_id FROM orders WHERE o_w_id = w AND o_id >= 2101;
  INSERT INTO order_line
  SELECT o.o_id, o.o_d_id, w, n, 1 + floor(random() * 100000)::int, w,
         CASE WHEN o.o_id < 2101 THEN now() END, 5,
         CASE WHEN o.o_id < 2101 THEN 0 ELSE (random() * 9999.99)::numeric(6,2) END, tpcc_rstr(24)
  FROM orders o, generate_series(1, 15) n
  WHERE o.o_w_id = w AND n <= o.o_ol_cnt;
END $$;
