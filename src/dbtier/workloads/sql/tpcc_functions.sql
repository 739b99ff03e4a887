-- The five TPC-C transactions as server-side functions, so that pgbench (C), not
-- Python, drives the load. Each call is one transaction.

-- New-Order (clause 2.4). p_rollback makes the last item unused, as TPC-C does for
-- 1% of new orders: the function's exception block rolls the whole order back,
-- so d_next_o_id (which NOPM counts) only advances for committed orders.
CREATE FUNCTION tpcc_new_order(p_w int, p_d int, p_c int, p_ol_cnt int, p_rollback bool, p_warehouses int)
RETURNS int LANGUAGE plpgsql AS $$
DECLARE
  v_o int; v_disc numeric; v_tax numeric; v_dtax numeric; v_price numeric; v_item int; v_supply int;
  v_qty int; v_sq int; v_total numeric := 0; v_all_local int := 1; n int;
BEGIN
  SELECT w_tax INTO v_tax FROM warehouse WHERE w_id = p_w;
  UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = p_w AND d_id = p_d
    RETURNING d_next_o_id - 1, d_tax INTO v_o, v_dtax;
  SELECT c_discount INTO v_disc FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_id = p_c;
  INSERT INTO orders VALUES (v_o, p_d, p_w, p_c, now(), NULL, p_ol_cnt, 1);
  INSERT INTO new_order VALUES (v_o, p_d, p_w);
  FOR n IN 1..p_ol_cnt LOOP
    v_item := CASE WHEN p_rollback AND n = p_ol_cnt THEN 100001 ELSE tpcc_nurand(8191, 1, 100000) END;
    -- 1% of lines come from a remote warehouse when there is more than one
    v_supply := CASE WHEN p_warehouses > 1 AND random() < 0.01
                     THEN 1 + (p_w + floor(random() * (p_warehouses - 1))::int) % p_warehouses ELSE p_w END;
    IF v_supply <> p_w THEN v_all_local := 0; END IF;
    v_qty := 1 + floor(random() * 10)::int;
    SELECT i_price INTO v_price FROM item WHERE i_id = v_item;
    IF NOT FOUND THEN
      RAISE EXCEPTION USING ERRCODE = 'P0001', MESSAGE = 'tpcc: item not valid';
    END IF;
    UPDATE stock SET s_quantity = CASE WHEN s_quantity - v_qty >= 10 THEN s_quantity - v_qty
                                       ELSE s_quantity - v_qty + 91 END,
                     s_ytd = s_ytd + v_qty, s_order_cnt = s_order_cnt + 1,
                     s_remote_cnt = s_remote_cnt + (v_supply <> p_w)::int
      WHERE s_w_id = v_supply AND s_i_id = v_item RETURNING s_quantity INTO v_sq;
    INSERT INTO order_line VALUES (v_o, p_d, p_w, n, v_item, v_supply, NULL, v_qty, v_qty * v_price,
                                   'dist-info-xxxxxxxxxxxxxx');
    v_total := v_total + v_qty * v_price;
  END LOOP;
  IF v_all_local = 0 THEN UPDATE orders SET o_all_local = 0 WHERE o_w_id = p_w AND o_d_id = p_d AND o_id = v_o; END IF;
  RETURN v_o;
EXCEPTION WHEN SQLSTATE 'P0001' THEN
  RETURN -1;  -- the TPC-C rollback: counted as a transaction, not as a new order
END $$;

-- Payment (clause 2.5): 60% of customers chosen by last name, 15% from a remote warehouse.
CREATE FUNCTION tpcc_payment(p_w int, p_d int, p_c int, p_by_name bool, p_amount numeric, p_warehouses int)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  v_cw int := p_w; v_cd int := p_d; v_c int := p_c; v_last varchar; v_credit char(2);
BEGIN
  IF p_warehouses > 1 AND random() < 0.15 THEN
    v_cw := 1 + (p_w + floor(random() * (p_warehouses - 1))::int) % p_warehouses;
    v_cd := 1 + floor(random() * 10)::int;
  END IF;
  UPDATE warehouse SET w_ytd = w_ytd + p_amount WHERE w_id = p_w;
  UPDATE district SET d_ytd = d_ytd + p_amount WHERE d_w_id = p_w AND d_id = p_d;
  IF p_by_name THEN
    v_last := tpcc_lastname(tpcc_nurand(255, 0, 999));
    SELECT c_id INTO v_c FROM (
      SELECT c_id, row_number() OVER (ORDER BY c_first) AS r, count(*) OVER () AS n
      FROM customer WHERE c_w_id = v_cw AND c_d_id = v_cd AND c_last = v_last) s
    WHERE r = (n + 1) / 2;
    IF v_c IS NULL THEN v_c := p_c; END IF;
  END IF;
  UPDATE customer SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount,
                      c_payment_cnt = c_payment_cnt + 1
    WHERE c_w_id = v_cw AND c_d_id = v_cd AND c_id = v_c RETURNING c_credit INTO v_credit;
  IF v_credit = 'BC' THEN
    UPDATE customer SET c_data = substr(v_c || ' ' || p_amount || ' ' || c_data, 1, 500)
      WHERE c_w_id = v_cw AND c_d_id = v_cd AND c_id = v_c;
  END IF;
  INSERT INTO history VALUES (v_c, v_cd, v_cw, p_d, p_w, now(), p_amount, 'payment');
END $$;

-- Order-Status (clause 2.6): read-only.
CREATE FUNCTION tpcc_order_status(p_w int, p_d int, p_c int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE v_o int; v_lines int;
BEGIN
  PERFORM c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_id = p_c;
  SELECT max(o_id) INTO v_o FROM orders WHERE o_w_id = p_w AND o_d_id = p_d AND o_c_id = p_c;
  SELECT count(*) INTO v_lines FROM order_line WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id = v_o;
  RETURN v_lines;
END $$;

-- Delivery (clause 2.7): the oldest undelivered order of each of the ten districts.
CREATE FUNCTION tpcc_delivery(p_w int, p_carrier int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE v_o int; v_c int; v_sum numeric; v_done int := 0; d int;
BEGIN
  FOR d IN 1..10 LOOP
    SELECT no_o_id INTO v_o FROM new_order WHERE no_w_id = p_w AND no_d_id = d
      ORDER BY no_o_id LIMIT 1 FOR UPDATE SKIP LOCKED;
    CONTINUE WHEN v_o IS NULL;
    DELETE FROM new_order WHERE no_w_id = p_w AND no_d_id = d AND no_o_id = v_o;
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
