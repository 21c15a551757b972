-- The docker-compose "cluster" profile's instance keeps its orders apart from
-- the default instance's: its stock lives in another Redis, and an activity's
-- stock must come from one Redis only. Its migrations run as seckill_migrate
-- (the migrate-cluster service); the service's user gets rows only
-- (20-runtime-user.sh).
CREATE DATABASE IF NOT EXISTS seckill_cluster;
GRANT ALL ON seckill_cluster.* TO 'seckill_migrate'@'%';
