-- The docker-compose "cluster" profile's instance keeps its orders apart from
-- the default instance's: its stock lives in another Redis, and an activity's
-- stock must come from one Redis only. The service applies its migrations to
-- this database at start-up.
CREATE DATABASE IF NOT EXISTS seckill_cluster;
GRANT ALL ON seckill_cluster.* TO 'seckill'@'%';
