-- The five TPC-C transactions as server-side functions, so that pgbench (C), not
-- Python, drives the load. Each call is one transaction, run at READ COMMITTED.
-- tpcc_c_last_run() (NURand's run-time C for C_LAST) is created by the loader.

-- The customer "by last name" (clauses 2.5.2.2 and 2.6.2.2): of the district's customers
-- with that C_LAST, ordered by C_FIRST, the one at position ceil(n/2). NULL when none.
-- A function of its own so that pg_stat_user_functions counts how often it runs.
CREATE FUNCTION tpcc_customer_by_name(p_w int, p_d int, p_last varchar) RETURNS int LANGUAGE plpgsql STABLE AS $$
DECLARE v_c int;
BEGIN
  SELECT c_id INTO v_c FROM (
    SELECT c_id, row_number() OVER (ORDER BY c_first) AS r, count(*) OVER () AS n
    FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_last = p_last) s
  WHERE r = (n + 1) / 2;
  RETURN v_c;
END $$;

-- A run-time C_LAST (clause 2.1.6): NURand(255, 0, 999) with the run constant.
CREATE FUNCTION tpcc_run_lastname() RETURNS varchar LANGUAGE sql VOLATILE AS $$
  SELECT tpcc_lastname(tpcc_nurand(255, 0, 999, tpcc_c_last_run()))
$$;

-- New-Order (clause 2.4). p_rollback makes the last item unused, as TPC-C does for
-- 1% of new orders: the function's exception block rolls the whole order back,
-- so d_next_o_id (which NOPM counts) only advances for committed orders.
-- The lines are processed in (supply warehouse, item) order so that two new orders
-- lock stock rows in the same order and cannot deadlock; the unused item stays last.
CREATE FUNCTION tpcc_new_order(p_w int, p_d int, p_c int, p_ol_cnt int, p_rollback bool, p_warehouses int)
RETURNS int LANGUAGE plpgsql AS $$
DECLARE
  v_o int; v_disc numeric; v_last varchar; v_credit char(2); v_tax numeric; v_dtax numeric;
  v_price numeric; v_iname varchar; v_idata varchar; v_sdata varchar; v_dist char(24);
  v_items int[]; v_supplies int[]; v_qty int; v_sq int; v_total numeric := 0; n int;
BEGIN
  SELECT w_tax INTO v_tax FROM warehouse WHERE w_id = p_w;
  UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = p_w AND d_id = p_d
    RETURNING d_next_o_id - 1, d_tax INTO v_o, v_dtax;
  SELECT c_discount, c_last, c_credit INTO v_disc, v_last, v_credit
    FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_id = p_c;
  -- items by NURand(8191, 1, 100000); 1% of lines from a remote warehouse when there is more than one
  SELECT array_agg(it ORDER BY it > 100000, sw, it), array_agg(sw ORDER BY it > 100000, sw, it)
    INTO v_items, v_supplies
    FROM (SELECT CASE WHEN p_rollback AND k = p_ol_cnt THEN 100001 ELSE tpcc_nurand(8191, 1, 100000) END AS it,
                 CASE WHEN p_warehouses > 1 AND random() < 0.01
                      THEN 1 + (p_w + floor(random() * (p_warehouses - 1))::int) % p_warehouses ELSE p_w END AS sw
          FROM generate_series(1, p_ol_cnt) k) s;
  INSERT INTO orders VALUES (v_o, p_d, p_w, p_c, now(), NULL, p_ol_cnt,
                             CASE WHEN p_w = ALL (v_supplies) THEN 1 ELSE 0 END);
  INSERT INTO new_order VALUES (v_o, p_d, p_w);
  FOR n IN 1..p_ol_cnt LOOP
    SELECT i_price, i_name, i_data INTO v_price, v_iname, v_idata FROM item WHERE i_id = v_items[n];
    IF NOT FOUND THEN
      RAISE EXCEPTION USING ERRCODE = 'P0001', MESSAGE = 'tpcc: item not valid';
    END IF;
    v_qty := 1 + floor(random() * 10)::int;
    UPDATE stock SET s_quantity = CASE WHEN s_quantity - v_qty >= 10 THEN s_quantity - v_qty
                                       ELSE s_quantity - v_qty + 91 END,
                     s_ytd = s_ytd + v_qty, s_order_cnt = s_order_cnt + 1,
                     s_remote_cnt = s_remote_cnt + (v_supplies[n] <> p_w)::int
      WHERE s_w_id = v_supplies[n] AND s_i_id = v_items[n]
      RETURNING s_quantity, s_data,
                CASE p_d WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04
                         WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08
                         WHEN 9 THEN s_dist_09 ELSE s_dist_10 END
      INTO v_sq, v_sdata, v_dist;
    INSERT INTO order_line VALUES (v_o, p_d, p_w, n, v_items[n], v_supplies[n], NULL, v_qty, v_qty * v_price, v_dist);
    v_total := v_total + v_qty * v_price;
  END LOOP;
  RETURN v_o;
EXCEPTION WHEN SQLSTATE 'P0001' THEN
  RETURN -1;  -- the TPC-C rollback: counted as a transaction, not as a new order
END $$;

-- Payment (clause 2.5): the customer by last name when p_by_name (the pgbench script
-- draws it 60% of the time), else by id; 15% from a remote warehouse. Returns C_ID.
CREATE FUNCTION tpcc_payment(p_w int, p_d int, p_c int, p_by_name bool, p_amount numeric, p_warehouses int)
RETURNS int LANGUAGE plpgsql AS $$
DECLARE
  v_cw int := p_w; v_cd int := p_d; v_c int := p_c; v_wname varchar; v_dname varchar;
BEGIN
  IF p_warehouses > 1 AND random() < 0.15 THEN
    v_cw := 1 + (p_w + floor(random() * (p_warehouses - 1))::int) % p_warehouses;
    v_cd := 1 + floor(random() * 10)::int;
  END IF;
  UPDATE warehouse SET w_ytd = w_ytd + p_amount WHERE w_id = p_w RETURNING w_name INTO v_wname;
  UPDATE district SET d_ytd = d_ytd + p_amount WHERE d_w_id = p_w AND d_id = p_d RETURNING d_name INTO v_dname;
  IF p_by_name THEN
    v_c := coalesce(tpcc_customer_by_name(v_cw, v_cd, tpcc_run_lastname()), p_c);
  END IF;
  -- a bad-credit customer's C_DATA gets the payment prepended, truncated to 500 characters
  UPDATE customer SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount,
                      c_payment_cnt = c_payment_cnt + 1,
                      c_data = CASE WHEN c_credit = 'BC'
                                    THEN substr(format('%s %s %s %s %s %s ', v_c, v_cd, v_cw, p_d, p_w, p_amount)
                                                || c_data, 1, 500)
                                    ELSE c_data END
    WHERE c_w_id = v_cw AND c_d_id = v_cd AND c_id = v_c;
  INSERT INTO history VALUES (v_c, v_cd, v_cw, p_d, p_w, now(), p_amount, v_wname || '    ' || v_dname);
  RETURN v_c;
END $$;

-- Order-Status (clause 2.6): read-only; the customer by last name when p_by_name
-- (60% of the time), else by id; its last order and that order's lines.
CREATE FUNCTION tpcc_order_status(p_w int, p_d int, p_c int, p_by_name bool) RETURNS int LANGUAGE plpgsql AS $$
DECLARE v_c int := p_c; v_o int; v_lines int;
BEGIN
  IF p_by_name THEN
    v_c := coalesce(tpcc_customer_by_name(p_w, p_d, tpcc_run_lastname()), p_c);
  END IF;
  PERFORM c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_id = v_c;
  SELECT o_id INTO v_o FROM orders WHERE o_w_id = p_w AND o_d_id = p_d AND o_c_id = v_c ORDER BY o_id DESC LIMIT 1;
  SELECT count(*) INTO v_lines FROM (
    SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d
    FROM order_line WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id = v_o) l;
  RETURN v_lines;
END $$;

-- Delivery (clause 2.7): for each of the ten districts, its oldest new order, deleted,
-- delivered and paid to the customer. No SKIP LOCKED: when another delivery of the same
-- warehouse holds that oldest row, the DELETE waits for it to commit, finds the row
-- gone (0 rows) and the loop takes the next oldest in a fresh READ COMMITTED snapshot;
-- two deliveries of one warehouse therefore run one after the other, never skipping
-- an order nor delivering one twice. A district without new orders is skipped (2.7.4.2).
CREATE FUNCTION tpcc_delivery(p_w int, p_carrier int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE v_o int; v_c int; v_sum numeric; v_done int := 0; d int;
BEGIN
  FOR d IN 1..10 LOOP
    LOOP
      SELECT min(no_o_id) INTO v_o FROM new_order WHERE no_w_id = p_w AND no_d_id = d;
      EXIT WHEN v_o IS NULL;
      DELETE FROM new_order WHERE no_w_id = p_w AND no_d_id = d AND no_o_id = v_o;
      EXIT WHEN FOUND;
    END LOOP;
    CONTINUE WHEN v_o IS NULL;
    UPDATE orders SET o_carrier_id = p_carrier WHERE o_w_id = p_w AND o_d_id = d AND o_id = v_o
      RETURNING o_c_id INTO v_c;
    UPDATE order_line SET ol_delivery_d = now() WHERE ol_w_id = p_w AND ol_d_id = d AND ol_o_id = v_o;
    SELECT sum(ol_amount) INTO v_sum FROM order_line WHERE ol_w_id = p_w AND ol_d_id = d AND ol_o_id = v_o;
    UPDATE customer SET c_balance = c_balance + coalesce(v_sum, 0), c_delivery_cnt = c_delivery_cnt + 1
      WHERE c_w_id = p_w AND c_d_id = d AND c_id = v_c;
    v_done := v_done + 1;
  END LOOP;
  RETURN v_done;
END $$;

-- Stock-Level (clause 2.8): read-only, an index range scan over the last 20 orders.
CREATE FUNCTION tpcc_stock_level(p_w int, p_d int, p_threshold int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE v_next int; v_low int;
BEGIN
  SELECT d_next_o_id INTO v_next FROM district WHERE d_w_id = p_w AND d_id = p_d;
  SELECT count(DISTINCT s_i_id) INTO v_low FROM order_line, stock
   WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id >= v_next - 20 AND ol_o_id < v_next
     AND s_w_id = p_w AND s_i_id = ol_i_id AND s_quantity < p_threshold;
  RETURN v_low;
END $$;
