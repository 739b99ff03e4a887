-- The five TPC-C transactions as MariaDB/MySQL stored procedures: PostgreSQL's tpcc_functions.sql
-- for InnoDB, so that one CALL (one round trip) is one transaction and sysbench's Lua
-- (workloads/lua/tpcc.lua) only draws the inputs, picks the mix and counts. Written for MariaDB 10.11;
-- the syntax (DELIMITER, SIGNAL/RESIGNAL, window functions, SUBSTRING_INDEX) is MySQL 8's too, untested
-- there (no MySQL server on this machine). Loaded by workloads/mariadb_tpcc.py through the client.
--
-- Every procedure begins and ends its own transaction (START TRANSACTION ... COMMIT) at the session's
-- isolation (the Lua sets READ COMMITTED), so the caller runs it with autocommit on. None returns a
-- result set: a CALL that does is followed by a second result (the CALL's status) that sysbench 1.0.20
-- never reads, and its next query fails with 2014 "Commands out of sync" (found on MariaDB 10.11).
-- New-order reports its order id, or -1 for the rollback, through an OUT parameter.
-- Any SQL error -- a deadlock (1213), which InnoDB has already rolled back, or a lock wait timeout
-- (1205), which undoes only the statement -- rolls the whole transaction back and is raised again
-- unchanged (RESIGNAL): the caller sees the same error number and retries, with no transaction left open.
-- Procedures, not functions: a function needs log_bin_trust_function_creators with the binary log on,
-- and cannot COMMIT.

DELIMITER //

-- The customer "by last name" (clauses 2.5.2.2 and 2.6.2.2): of the district's customers with that
-- C_LAST, ordered by C_FIRST, the one at position ceil(n/2); p_c unchanged when there is none.
CREATE PROCEDURE tpcc_customer_by_name(p_w INT, p_d INT, p_last VARCHAR(16), INOUT p_c INT)
BEGIN
  DECLARE v_c INT DEFAULT NULL;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_c = NULL;
  SELECT c_id INTO v_c FROM (
    SELECT c_id, ROW_NUMBER() OVER (ORDER BY c_first) AS r, COUNT(*) OVER () AS n
    FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_last = p_last) s
  WHERE r = (n + 1) DIV 2;
  IF v_c IS NOT NULL THEN
    SET p_c = v_c;
  END IF;
END //

-- New-Order (clause 2.4). The order's lines come as three comma-separated lists of the same length
-- (items, supply warehouses, quantities), already in (supply warehouse, item) order with TPC-C's
-- unused item (100001, the 1% rollback) last, so that two new orders lock stock rows in one order and
-- cannot deadlock. The unused item's empty lookup rolls the whole order back, d_next_o_id included
-- (NOPM counts only committed orders). p_o: the order id, or -1 for the rollback.
CREATE PROCEDURE tpcc_new_order(p_w INT, p_d INT, p_c INT, p_items VARCHAR(255), p_supply VARCHAR(255),
                                p_qty VARCHAR(255), OUT p_o INT)
proc: BEGIN
  DECLARE v_o, v_n, v_k, v_it, v_sw, v_qty, v_sq, v_all_local INT;
  DECLARE v_tax, v_dtax, v_disc DECIMAL(4,4);
  DECLARE v_last VARCHAR(16);
  DECLARE v_credit CHAR(2);
  DECLARE v_price DECIMAL(5,2);
  DECLARE v_iname VARCHAR(24);
  DECLARE v_idata, v_sdata VARCHAR(50);
  DECLARE v_dist CHAR(24);
  DECLARE v_total DECIMAL(12,2) DEFAULT 0;
  DECLARE v_found INT DEFAULT 1;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  SET p_o = NULL;
  SET v_n = LENGTH(p_items) - LENGTH(REPLACE(p_items, ',', '')) + 1;
  -- all local when the supply list is p_w n times
  SET v_all_local = (p_supply = CONCAT(REPEAT(CONCAT(p_w, ','), v_n - 1), p_w));
  START TRANSACTION;
  SELECT w_tax INTO v_tax FROM warehouse WHERE w_id = p_w;
  UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = p_w AND d_id = p_d;
  SELECT d_next_o_id - 1, d_tax INTO v_o, v_dtax FROM district WHERE d_w_id = p_w AND d_id = p_d;
  SELECT c_discount, c_last, c_credit INTO v_disc, v_last, v_credit
    FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_id = p_c;
  INSERT INTO orders VALUES (v_o, p_d, p_w, p_c, NOW(), NULL, v_n, v_all_local);
  INSERT INTO new_order VALUES (v_o, p_d, p_w);
  SET v_k = 1;
  WHILE v_k <= v_n DO
    SET v_it = CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(p_items, ',', v_k), ',', -1) AS SIGNED);
    SET v_sw = CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(p_supply, ',', v_k), ',', -1) AS SIGNED);
    SET v_qty = CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(p_qty, ',', v_k), ',', -1) AS SIGNED);
    SET v_found = 1;
    SELECT i_price, i_name, i_data INTO v_price, v_iname, v_idata FROM item WHERE i_id = v_it;
    IF v_found = 0 THEN
      ROLLBACK;            -- the TPC-C rollback: counted as a transaction, not as a new order
      SET p_o = -1;
      LEAVE proc;
    END IF;
    UPDATE stock SET s_quantity = CASE WHEN s_quantity - v_qty >= 10 THEN s_quantity - v_qty
                                       ELSE s_quantity - v_qty + 91 END,
                     s_ytd = s_ytd + v_qty, s_order_cnt = s_order_cnt + 1,
                     s_remote_cnt = s_remote_cnt + (v_sw <> p_w)
      WHERE s_w_id = v_sw AND s_i_id = v_it;
    SELECT s_quantity, s_data,
           CASE p_d WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04
                    WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08
                    WHEN 9 THEN s_dist_09 ELSE s_dist_10 END
      INTO v_sq, v_sdata, v_dist FROM stock WHERE s_w_id = v_sw AND s_i_id = v_it;
    INSERT INTO order_line VALUES (v_o, p_d, p_w, v_k, v_it, v_sw, NULL, v_qty, v_qty * v_price, v_dist);
    SET v_total = v_total + v_qty * v_price;
    SET v_k = v_k + 1;
  END WHILE;
  COMMIT;
  SET p_o = v_o;
END //

-- Payment (clause 2.5): the customer's warehouse and district (p_cw, p_cd: remote 15% of the time
-- with more than one warehouse), by last name when p_last is not NULL (60%), else by id.
CREATE PROCEDURE tpcc_payment(p_w INT, p_d INT, p_cw INT, p_cd INT, p_c INT, p_last VARCHAR(16),
                              p_amount DECIMAL(6,2))
BEGIN
  DECLARE v_c INT DEFAULT p_c;
  DECLARE v_wname, v_dname VARCHAR(10);
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  START TRANSACTION;
  UPDATE warehouse SET w_ytd = w_ytd + p_amount WHERE w_id = p_w;
  SELECT w_name INTO v_wname FROM warehouse WHERE w_id = p_w;
  UPDATE district SET d_ytd = d_ytd + p_amount WHERE d_w_id = p_w AND d_id = p_d;
  SELECT d_name INTO v_dname FROM district WHERE d_w_id = p_w AND d_id = p_d;
  IF p_last IS NOT NULL THEN
    CALL tpcc_customer_by_name(p_cw, p_cd, p_last, v_c);
  END IF;
  -- a bad-credit customer's C_DATA gets the payment prepended, truncated to 500 characters
  UPDATE customer SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount,
                      c_payment_cnt = c_payment_cnt + 1,
                      c_data = CASE WHEN c_credit = 'BC'
                                    THEN SUBSTRING(CONCAT_WS(' ', v_c, p_cd, p_cw, p_d, p_w, p_amount, c_data), 1, 500)
                                    ELSE c_data END
    WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_c;
  INSERT INTO history VALUES (v_c, p_cd, p_cw, p_d, p_w, NOW(), p_amount, CONCAT(v_wname, '    ', v_dname));
  COMMIT;
END //

-- Order-Status (clause 2.6): read-only; the customer by last name when p_last is not NULL, else by
-- id; its last order and that order's lines (read, not returned: there is no terminal).
CREATE PROCEDURE tpcc_order_status(p_w INT, p_d INT, p_c INT, p_last VARCHAR(16))
BEGIN
  DECLARE v_c INT DEFAULT p_c;
  DECLARE v_o INT DEFAULT NULL;
  DECLARE v_lines INT DEFAULT 0;
  DECLARE v_balance DECIMAL(12,2);
  DECLARE v_first, v_last VARCHAR(16);
  DECLARE v_middle CHAR(2);
  DECLARE v_qty, v_amount DECIMAL(14,2);
  DECLARE v_delivered DATETIME;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_o = NULL;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  START TRANSACTION;
  IF p_last IS NOT NULL THEN
    CALL tpcc_customer_by_name(p_w, p_d, p_last, v_c);
  END IF;
  SELECT c_balance, c_first, c_middle, c_last INTO v_balance, v_first, v_middle, v_last
    FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_id = v_c;
  SELECT o_id INTO v_o FROM orders WHERE o_w_id = p_w AND o_d_id = p_d AND o_c_id = v_c
    ORDER BY o_id DESC LIMIT 1;
  -- the lines' columns are read (summed), as a terminal would show them
  SELECT COUNT(ol_i_id + ol_supply_w_id), SUM(ol_quantity), SUM(ol_amount), MAX(ol_delivery_d)
    INTO v_lines, v_qty, v_amount, v_delivered
    FROM order_line WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id = v_o;
  COMMIT;
END //

-- Delivery (clause 2.7): for each of the ten districts, its oldest new order, deleted, delivered and
-- paid to the customer. The oldest row is locked (FOR UPDATE, no SKIP LOCKED): a concurrent delivery
-- of the same warehouse waits for it, then InnoDB skips the row the other deleted and locks the next;
-- a district without new orders is skipped (2.7.4.2).
CREATE PROCEDURE tpcc_delivery(p_w INT, p_carrier INT)
BEGIN
  DECLARE v_d INT DEFAULT 1;
  DECLARE v_o, v_c INT;
  DECLARE v_sum DECIMAL(14,2);
  DECLARE v_done INT DEFAULT 0;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_o = NULL;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  START TRANSACTION;
  WHILE v_d <= 10 DO
    SET v_o = NULL;
    SELECT no_o_id INTO v_o FROM new_order WHERE no_w_id = p_w AND no_d_id = v_d
      ORDER BY no_o_id LIMIT 1 FOR UPDATE;
    IF v_o IS NOT NULL THEN
      DELETE FROM new_order WHERE no_w_id = p_w AND no_d_id = v_d AND no_o_id = v_o;
      UPDATE orders SET o_carrier_id = p_carrier WHERE o_w_id = p_w AND o_d_id = v_d AND o_id = v_o;
      SELECT o_c_id INTO v_c FROM orders WHERE o_w_id = p_w AND o_d_id = v_d AND o_id = v_o;
      UPDATE order_line SET ol_delivery_d = NOW() WHERE ol_w_id = p_w AND ol_d_id = v_d AND ol_o_id = v_o;
      SELECT COALESCE(SUM(ol_amount), 0) INTO v_sum FROM order_line
        WHERE ol_w_id = p_w AND ol_d_id = v_d AND ol_o_id = v_o;
      UPDATE customer SET c_balance = c_balance + v_sum, c_delivery_cnt = c_delivery_cnt + 1
        WHERE c_w_id = p_w AND c_d_id = v_d AND c_id = v_c;
      SET v_done = v_done + 1;
    END IF;
    SET v_d = v_d + 1;
  END WHILE;
  COMMIT;
END //

-- Stock-Level (clause 2.8): read-only, an index range scan over the district's last 20 orders.
CREATE PROCEDURE tpcc_stock_level(p_w INT, p_d INT, p_threshold INT)
BEGIN
  DECLARE v_next, v_low INT;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  START TRANSACTION;
  SELECT d_next_o_id INTO v_next FROM district WHERE d_w_id = p_w AND d_id = p_d;
  SELECT COUNT(DISTINCT s_i_id) INTO v_low FROM order_line JOIN stock ON s_w_id = p_w AND s_i_id = ol_i_id
   WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id >= v_next - 20 AND ol_o_id < v_next
     AND s_quantity < p_threshold;
  COMMIT;
END //

DELIMITER ;
