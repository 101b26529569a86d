package control

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awsathena "github.com/aws/aws-sdk-go-v2/service/athena"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/collectors/athena"
	"github.com/floe-project/floe/collectors/snowflake"
	"github.com/floe-project/floe/collectors/trinolive"
	"github.com/floe-project/floe/control/config"
)

// watermark reads a cursor that is a time (every poller's):
// zero for the first poll.
func watermark(cursor string) (time.Time, error) {
	if cursor == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, cursor)
	if err != nil {
		return time.Time{}, fmt.Errorf("cursor %q: want an RFC 3339 time: %w", cursor, err)
	}
	return t, nil
}

// formatWatermark is the cursor of a time; "" for zero (nothing seen yet).
func formatWatermark(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// pollWatermark runs poll from the watermark cursor holds and returns the
// cursor of the watermark it returns; cursor itself on any error.
func pollWatermark(cursor string, poll func(since time.Time) ([]collectors.QueryEvent, time.Time, error)) ([]collectors.QueryEvent, string, error) {
	since, err := watermark(cursor)
	if err != nil {
		return nil, cursor, err
	}
	events, next, err := poll(since)
	if err != nil {
		return nil, cursor, err
	}
	return events, formatWatermark(next), nil
}

// trinoPoller polls system.runtime.queries of a Trino coordinator
// ([trinolive.QueryRuntime]); its cursor is the newest "end" seen.
type trinoPoller struct {
	db *sql.DB
}

func openTrinoPoller(_ context.Context, src config.SourceConfig) (Poller, error) {
	dsn := src.DSN.Reveal()
	if src.Password != "" {
		u, err := url.Parse(dsn)
		if err != nil {
			return nil, errors.New("parse the trino dsn") // not echoed: it may hold a password
		}
		u.User = url.UserPassword(u.User.Username(), src.Password.Reveal())
		dsn = u.String()
	}
	db, err := trinolive.Open(dsn)
	if err != nil {
		return nil, err
	}
	return &trinoPoller{db: db}, nil
}

func (p *trinoPoller) Poll(ctx context.Context, cursor string) ([]collectors.QueryEvent, string, error) {
	return pollWatermark(cursor, func(since time.Time) ([]collectors.QueryEvent, time.Time, error) {
		return trinolive.QueryRuntime(ctx, p.db, since)
	})
}

// pingSince is a watermark no query ended after: a ping reads no row.
var pingSince = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// Ping asks for the queries that ended after [pingSince]: none, but it
// proves the coordinator answers and floe's user may read
// system.runtime.queries.
func (p *trinoPoller) Ping(ctx context.Context) (string, error) {
	if _, _, err := trinolive.QueryRuntime(ctx, p.db, pingSince); err != nil {
		return "", err
	}
	return "system.runtime.queries readable", nil
}

func (p *trinoPoller) Close() error { return p.db.Close() }

// athenaPoller polls one Athena workgroup's query executions
// ([athena.Poll]); its cursor is the newest submission time returned.
type athenaPoller struct {
	client    *awsathena.Client
	workgroup string
}

func openAthenaPoller(ctx context.Context, src config.SourceConfig) (Poller, error) {
	var client *awsathena.Client
	endpoint := func(o *awsathena.Options) {
		if src.Endpoint != "" {
			o.BaseEndpoint = aws.String(src.Endpoint)
		}
	}
	if src.AccessKeyID != "" {
		client = awsathena.New(awsathena.Options{
			Region: src.Region,
			Credentials: credentials.NewStaticCredentialsProvider(
				src.AccessKeyID.Reveal(), src.SecretAccessKey.Reveal(), src.SessionToken.Reveal()),
		}, endpoint)
	} else {
		cfg, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithRegion(src.Region))
		if err != nil {
			return nil, fmt.Errorf("load the AWS configuration: %w", err)
		}
		client = awsathena.NewFromConfig(cfg, endpoint)
	}
	return &athenaPoller{client: client, workgroup: src.Workgroup}, nil
}

func (p *athenaPoller) Poll(ctx context.Context, cursor string) ([]collectors.QueryEvent, string, error) {
	return pollWatermark(cursor, func(since time.Time) ([]collectors.QueryEvent, time.Time, error) {
		return athena.Poll(ctx, p.client, p.workgroup, since)
	})
}

// Ping lists one query execution of the workgroup.
func (p *athenaPoller) Ping(ctx context.Context) (string, error) {
	in := &awsathena.ListQueryExecutionsInput{MaxResults: aws.Int32(1)}
	if p.workgroup != "" {
		in.WorkGroup = aws.String(p.workgroup)
	}
	if _, err := p.client.ListQueryExecutions(ctx, in); err != nil {
		return "", fmt.Errorf("list athena query executions: %w", err)
	}
	return "query executions listable", nil
}

func (p *athenaPoller) Close() error { return nil }

// snowflakePoller polls an account's QUERY_HISTORY joined with
// ACCESS_HISTORY through the SQL API ([snowflake.Poll]); its cursor is the
// newest START_TIME read, kept below a query still running.
type snowflakePoller struct {
	client *snowflake.Client
	opts   snowflake.PollOptions
}

// openSnowflakePoller builds the source's SQL API client. A private key
// file is read here, so a rotated key is picked up when the poller is
// opened again (after a failed poll, or at the next start).
func openSnowflakePoller(_ context.Context, src config.SourceConfig) (Poller, error) {
	co := snowflake.ClientOptions{
		Account: src.Account, URL: src.URL, User: src.User, Warehouse: src.Warehouse, Role: src.Role,
		PrivateKeyPEM: snowflake.Secret(src.PrivateKey.Reveal()), OAuthToken: snowflake.Secret(src.OAuthToken.Reveal()),
	}
	if src.PrivateKeyFile != "" {
		pemText, err := os.ReadFile(src.PrivateKeyFile)
		if err != nil {
			return nil, fmt.Errorf("read the snowflake private key file: %w", err)
		}
		co.PrivateKeyPEM = snowflake.Secret(pemText)
	}
	if src.Auth == config.SnowflakeAuthOAuth {
		co.PrivateKeyPEM, co.User = "", ""
	} else {
		co.OAuthToken = ""
	}
	client, err := snowflake.NewClient(co)
	if err != nil {
		return nil, err
	}
	return &snowflakePoller{client: client, opts: snowflake.PollOptions{BatchSize: src.BatchSize, Settle: src.SettleDuration()}}, nil
}

func (p *snowflakePoller) Poll(ctx context.Context, cursor string) ([]collectors.QueryEvent, string, error) {
	return pollWatermark(cursor, func(since time.Time) ([]collectors.QueryEvent, time.Time, error) {
		return snowflake.Poll(ctx, p.client, p.opts, since)
	})
}

// Ping runs SELECT 1 (the URL, the credentials, the warehouse and the
// role work), then the poll's statement over an empty window (the role
// may read the ACCOUNT_USAGE views): neither reads a query.
func (p *snowflakePoller) Ping(ctx context.Context) (string, error) {
	if err := p.client.Check(ctx); err != nil {
		return "", fmt.Errorf("run SELECT 1: %w", err)
	}
	if err := snowflake.CheckHistory(ctx, p.client); err != nil {
		return "", err
	}
	return "SELECT 1 ran; ACCOUNT_USAGE.QUERY_HISTORY and ACCESS_HISTORY readable", nil
}

// Close has nothing to release: the client's HTTP connections are
// pooled by its transport.
func (p *snowflakePoller) Close() error { return nil }
