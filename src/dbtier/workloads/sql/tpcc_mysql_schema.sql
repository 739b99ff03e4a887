-- TPC-C-like schema for MySQL/MariaDB (InnoDB): the nine tables of tpcc_schema.sql with the same
-- columns in the same order (the loader's tab-separated rows follow that order). The primary keys
-- are declared here, not after the load: InnoDB stores a table in its primary key (the clustered
-- index), so adding it later would rebuild the table. The rows are generated in key order.
-- DATETIME, not TIMESTAMP (no implicit defaults or time zone); latin1: the data is ASCII, one byte
-- a character as in PostgreSQL. tpcc_mysql_indexes.sql adds the secondary indexes after the load.
CREATE TABLE warehouse (
  w_id int NOT NULL, w_name varchar(10), w_street_1 varchar(20), w_street_2 varchar(20), w_city varchar(20),
  w_state char(2), w_zip char(9), w_tax decimal(4,4), w_ytd decimal(12,2),
  PRIMARY KEY (w_id)) ENGINE=InnoDB DEFAULT CHARSET=latin1;
CREATE TABLE district (
  d_id int NOT NULL, d_w_id int NOT NULL, d_name varchar(10), d_street_1 varchar(20), d_street_2 varchar(20),
  d_city varchar(20), d_state char(2), d_zip char(9), d_tax decimal(4,4), d_ytd decimal(12,2), d_next_o_id int,
  PRIMARY KEY (d_w_id, d_id)) ENGINE=InnoDB DEFAULT CHARSET=latin1;
CREATE TABLE customer (
  c_id int NOT NULL, c_d_id int NOT NULL, c_w_id int NOT NULL, c_first varchar(16), c_middle char(2),
  c_last varchar(16), c_street_1 varchar(20), c_street_2 varchar(20), c_city varchar(20), c_state char(2),
  c_zip char(9), c_phone char(16), c_since datetime, c_credit char(2), c_credit_lim decimal(12,2),
  c_discount decimal(4,4), c_balance decimal(12,2), c_ytd_payment decimal(12,2), c_payment_cnt int,
  c_delivery_cnt int, c_data varchar(500),
  PRIMARY KEY (c_w_id, c_d_id, c_id)) ENGINE=InnoDB DEFAULT CHARSET=latin1;
-- no primary key, as in PostgreSQL (InnoDB adds a hidden row id)
CREATE TABLE history (
  h_c_id int, h_c_d_id int, h_c_w_id int, h_d_id int, h_w_id int, h_date datetime, h_amount decimal(6,2),
  h_data varchar(24)) ENGINE=InnoDB DEFAULT CHARSET=latin1;
CREATE TABLE orders (
  o_id int NOT NULL, o_d_id int NOT NULL, o_w_id int NOT NULL, o_c_id int, o_entry_d datetime,
  o_carrier_id int, o_ol_cnt int, o_all_local int,
  PRIMARY KEY (o_w_id, o_d_id, o_id)) ENGINE=InnoDB DEFAULT CHARSET=latin1;
CREATE TABLE new_order (no_o_id int NOT NULL, no_d_id int NOT NULL, no_w_id int NOT NULL,
  PRIMARY KEY (no_w_id, no_d_id, no_o_id)) ENGINE=InnoDB DEFAULT CHARSET=latin1;
CREATE TABLE order_line (
  ol_o_id int NOT NULL, ol_d_id int NOT NULL, ol_w_id int NOT NULL, ol_number int NOT NULL, ol_i_id int,
  ol_supply_w_id int, ol_delivery_d datetime, ol_quantity int, ol_amount decimal(6,2), ol_dist_info char(24),
  PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)) ENGINE=InnoDB DEFAULT CHARSET=latin1;
CREATE TABLE item (i_id int NOT NULL, i_im_id int, i_name varchar(24), i_price decimal(5,2), i_data varchar(50),
  PRIMARY KEY (i_id)) ENGINE=InnoDB DEFAULT CHARSET=latin1;
CREATE TABLE stock (
  s_i_id int NOT NULL, s_w_id int NOT NULL, s_quantity int, s_dist_01 char(24), s_dist_02 char(24),
  s_dist_03 char(24), s_dist_04 char(24), s_dist_05 char(24), s_dist_06 char(24), s_dist_07 char(24),
  s_dist_08 char(24), s_dist_09 char(24), s_dist_10 char(24), s_ytd int, s_order_cnt int, s_remote_cnt int,
  s_data varchar(50),
  PRIMARY KEY (s_w_id, s_i_id)) ENGINE=InnoDB DEFAULT CHARSET=latin1;
-- NURand's C for C_LAST, fixed for this database (clause 2.1.6.1): the loader writes the one row,
-- tpcc.lua reads c_run at start (PostgreSQL's tpcc_c_last_run()).
CREATE TABLE tpcc_c_last (c_load int NOT NULL, c_run int NOT NULL) ENGINE=InnoDB;
