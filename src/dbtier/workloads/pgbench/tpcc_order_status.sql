\set w_id random(1, :warehouses)
\set d_id random(1, 10)
\set c_id ((random(0, 1023) | random(1, 3000)) % 3000) + 1
\set by_name random(1, 100)
SELECT tpcc_order_status(:w_id, :d_id, :c_id, :by_name <= 60);
