package redis

// Command metadata of the Redis 7.2 commands MiniKV serves that Redis
// 7.0.15 (cmddata.go) lacks, in the same form: COMMAND INFO and COMMAND
// DOCS replies in RESP3, as Redis 7.2.4 gives them (taken from
// valkey-server 8.0.1, which reports redis_version 7.2.4 and keeps Redis
// 7.2.4's command table for these; WAITAOF's summary says "master" as
// Redis's does, where Valkey's says "primary"; CLUSTER MYSHARDID has
// only the stale flag, as in Redis 7.2.4, where Valkey 8 adds loading to
// the CLUSTER subcommands). TestCommandData72 checks
// them against valkey-server.
var redis72CommandData = map[string][2]string{
	"waitaof": {
		"*10\r\n$7\r\nwaitaof\r\n:4\r\n~1\r\n+blocking\r\n:0\r\n:0\r\n:0\r\n~3\r\n+@slow\r\n+@blocking\r\n+@connection\r\n~2\r\n$25\r\nrequest_policy:all_shards\r\n$23\r\nresponse_policy:agg_min\r\n~0\r\n*0\r\n",
		"%5\r\n$7\r\nsummary\r\n$138\r\nBlocks until all of the preceding write commands sent by the connection are written to the append-only file of the master and/or replicas.\r\n$5\r\nsince\r\n$5\r\n7.2.0\r\n$5\r\ngroup\r\n$7\r\ngeneric\r\n$10\r\ncomplexity\r\n$4\r\nO(1)\r\n$9\r\narguments\r\n*3\r\n%3\r\n$4\r\nname\r\n$8\r\nnumlocal\r\n$4\r\ntype\r\n$7\r\ninteger\r\n$12\r\ndisplay_text\r\n$8\r\nnumlocal\r\n%3\r\n$4\r\nname\r\n$11\r\nnumreplicas\r\n$4\r\ntype\r\n$7\r\ninteger\r\n$12\r\ndisplay_text\r\n$11\r\nnumreplicas\r\n%3\r\n$4\r\nname\r\n$7\r\ntimeout\r\n$4\r\ntype\r\n$7\r\ninteger\r\n$12\r\ndisplay_text\r\n$7\r\ntimeout\r\n",
	},
	"client|no-touch": {
		"*10\r\n$15\r\nclient|no-touch\r\n:3\r\n~3\r\n+noscript\r\n+loading\r\n+stale\r\n:0\r\n:0\r\n:0\r\n~2\r\n+@slow\r\n+@connection\r\n~0\r\n~0\r\n*0\r\n",
		"%5\r\n$7\r\nsummary\r\n$81\r\nControls whether commands sent by the client affect the LRU/LFU of accessed keys.\r\n$5\r\nsince\r\n$5\r\n7.2.0\r\n$5\r\ngroup\r\n$10\r\nconnection\r\n$10\r\ncomplexity\r\n$4\r\nO(1)\r\n$9\r\narguments\r\n*1\r\n%3\r\n$4\r\nname\r\n$7\r\nenabled\r\n$4\r\ntype\r\n$5\r\noneof\r\n$9\r\narguments\r\n*2\r\n%4\r\n$4\r\nname\r\n$2\r\non\r\n$4\r\ntype\r\n$10\r\npure-token\r\n$12\r\ndisplay_text\r\n$2\r\non\r\n$5\r\ntoken\r\n$2\r\nON\r\n%4\r\n$4\r\nname\r\n$3\r\noff\r\n$4\r\ntype\r\n$10\r\npure-token\r\n$12\r\ndisplay_text\r\n$3\r\noff\r\n$5\r\ntoken\r\n$3\r\nOFF\r\n",
	},
	"client|setinfo": {
		"*10\r\n$14\r\nclient|setinfo\r\n:4\r\n~3\r\n+noscript\r\n+loading\r\n+stale\r\n:0\r\n:0\r\n:0\r\n~2\r\n+@slow\r\n+@connection\r\n~2\r\n$24\r\nrequest_policy:all_nodes\r\n$29\r\nresponse_policy:all_succeeded\r\n~0\r\n*0\r\n",
		"%5\r\n$7\r\nsummary\r\n$54\r\nSets information specific to the client or connection.\r\n$5\r\nsince\r\n$5\r\n7.2.0\r\n$5\r\ngroup\r\n$10\r\nconnection\r\n$10\r\ncomplexity\r\n$4\r\nO(1)\r\n$9\r\narguments\r\n*1\r\n%3\r\n$4\r\nname\r\n$4\r\nattr\r\n$4\r\ntype\r\n$5\r\noneof\r\n$9\r\narguments\r\n*2\r\n%4\r\n$4\r\nname\r\n$7\r\nlibname\r\n$4\r\ntype\r\n$6\r\nstring\r\n$12\r\ndisplay_text\r\n$7\r\nlibname\r\n$5\r\ntoken\r\n$8\r\nLIB-NAME\r\n%4\r\n$4\r\nname\r\n$6\r\nlibver\r\n$4\r\ntype\r\n$6\r\nstring\r\n$12\r\ndisplay_text\r\n$6\r\nlibver\r\n$5\r\ntoken\r\n$7\r\nLIB-VER\r\n",
	},
	"zrank": {
		"*10\r\n$5\r\nzrank\r\n:-3\r\n~2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n~3\r\n+@read\r\n+@sortedset\r\n+@fast\r\n~0\r\n~1\r\n%3\r\n$5\r\nflags\r\n~2\r\n+RO\r\n+access\r\n$12\r\nbegin_search\r\n%2\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n%1\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n%2\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n%3\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*0\r\n",
		"%6\r\n$7\r\nsummary\r\n$74\r\nReturns the index of a member in a sorted set ordered by ascending scores.\r\n$5\r\nsince\r\n$5\r\n2.0.0\r\n$5\r\ngroup\r\n$10\r\nsorted-set\r\n$10\r\ncomplexity\r\n$9\r\nO(log(N))\r\n$7\r\nhistory\r\n~1\r\n*2\r\n$5\r\n7.2.0\r\n$40\r\nAdded the optional `WITHSCORE` argument.\r\n$9\r\narguments\r\n*3\r\n%4\r\n$4\r\nname\r\n$3\r\nkey\r\n$4\r\ntype\r\n$3\r\nkey\r\n$12\r\ndisplay_text\r\n$3\r\nkey\r\n$14\r\nkey_spec_index\r\n:0\r\n%3\r\n$4\r\nname\r\n$6\r\nmember\r\n$4\r\ntype\r\n$6\r\nstring\r\n$12\r\ndisplay_text\r\n$6\r\nmember\r\n%5\r\n$4\r\nname\r\n$9\r\nwithscore\r\n$4\r\ntype\r\n$10\r\npure-token\r\n$12\r\ndisplay_text\r\n$9\r\nwithscore\r\n$5\r\ntoken\r\n$9\r\nWITHSCORE\r\n$5\r\nflags\r\n~1\r\n+optional\r\n",
	},
	"zrevrank": {
		"*10\r\n$8\r\nzrevrank\r\n:-3\r\n~2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n~3\r\n+@read\r\n+@sortedset\r\n+@fast\r\n~0\r\n~1\r\n%3\r\n$5\r\nflags\r\n~2\r\n+RO\r\n+access\r\n$12\r\nbegin_search\r\n%2\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n%1\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n%2\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n%3\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*0\r\n",
		"%6\r\n$7\r\nsummary\r\n$75\r\nReturns the index of a member in a sorted set ordered by descending scores.\r\n$5\r\nsince\r\n$5\r\n2.0.0\r\n$5\r\ngroup\r\n$10\r\nsorted-set\r\n$10\r\ncomplexity\r\n$9\r\nO(log(N))\r\n$7\r\nhistory\r\n~1\r\n*2\r\n$5\r\n7.2.0\r\n$40\r\nAdded the optional `WITHSCORE` argument.\r\n$9\r\narguments\r\n*3\r\n%4\r\n$4\r\nname\r\n$3\r\nkey\r\n$4\r\ntype\r\n$3\r\nkey\r\n$12\r\ndisplay_text\r\n$3\r\nkey\r\n$14\r\nkey_spec_index\r\n:0\r\n%3\r\n$4\r\nname\r\n$6\r\nmember\r\n$4\r\ntype\r\n$6\r\nstring\r\n$12\r\ndisplay_text\r\n$6\r\nmember\r\n%5\r\n$4\r\nname\r\n$9\r\nwithscore\r\n$4\r\ntype\r\n$10\r\npure-token\r\n$12\r\ndisplay_text\r\n$9\r\nwithscore\r\n$5\r\ntoken\r\n$9\r\nWITHSCORE\r\n$5\r\nflags\r\n~1\r\n+optional\r\n",
	},
	"cluster|myshardid": {
		"*10\r\n$17\r\ncluster|myshardid\r\n:2\r\n~1\r\n+stale\r\n:0\r\n:0\r\n:0\r\n~1\r\n+@slow\r\n~1\r\n$23\r\nnondeterministic_output\r\n~0\r\n*0\r\n",
		"%4\r\n$7\r\nsummary\r\n$31\r\nReturns the shard ID of a node.\r\n$5\r\nsince\r\n$5\r\n7.2.0\r\n$5\r\ngroup\r\n$7\r\ncluster\r\n$10\r\ncomplexity\r\n$4\r\nO(1)\r\n",
	},
}
