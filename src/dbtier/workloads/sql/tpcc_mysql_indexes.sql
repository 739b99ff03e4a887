-- The secondary indexes the transactions use (tpcc_indexes.sql's), added after the load; InnoDB
-- keeps them in the table's own file. Then fresh statistics for the optimizer.
CREATE INDEX customer_name ON customer (c_w_id, c_d_id, c_last, c_first);
CREATE INDEX orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id);
ANALYZE TABLE warehouse, district, customer, history, orders, new_order, order_line, item, stock;
