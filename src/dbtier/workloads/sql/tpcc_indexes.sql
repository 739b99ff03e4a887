-- Primary keys and the secondary indexes the transactions use; {ts} is the index
-- tablespace clause (empty, or ` USING INDEX TABLESPACE dbtier_index`).
ALTER TABLE warehouse ADD PRIMARY KEY (w_id){ts};
ALTER TABLE district ADD PRIMARY KEY (d_w_id, d_id){ts};
ALTER TABLE customer ADD PRIMARY KEY (c_w_id, c_d_id, c_id){ts};
ALTER TABLE orders ADD PRIMARY KEY (o_w_id, o_d_id, o_id){ts};
ALTER TABLE new_order ADD PRIMARY KEY (no_w_id, no_d_id, no_o_id){ts};
ALTER TABLE order_line ADD PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number){ts};
ALTER TABLE item ADD PRIMARY KEY (i_id){ts};
ALTER TABLE stock ADD PRIMARY KEY (s_w_id, s_i_id){ts};
CREATE INDEX customer_name ON customer (c_w_id, c_d_id, c_last, c_first){its};
CREATE INDEX orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id){its};
