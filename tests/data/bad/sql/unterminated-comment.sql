INSERT INTO t SELECT a FROM s; /* no end
