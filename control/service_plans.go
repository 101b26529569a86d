package control

import (
	"context"
	"fmt"

	"github.com/floe-project/floe/lake"
)

// ProposeRequest is what [Service.Propose] is asked.
type ProposeRequest struct {
	// Project says what to project; a zero TargetFileSizeBytes takes the
	// table's policy's target (then the table's own).
	Project ProjectOptions
	// By is who proposes.
	By string
	// Force proposes the best candidate even without a gain.
	Force bool
	// MinGainPP, when set, is the least gain asked of a candidate over
	// the current layout; nil takes floe.yaml's plan.min_gain_pp.
	MinGainPP *float64
}

// Propose projects table id's candidates from its collected queries (or
// req.Project's workload) and proposes the best when it gains enough
// ([PlanBest]): the planning use case of floe plan and the API.
func (s *Service) Propose(ctx context.Context, id lake.Ident, req ProposeRequest) (Proposal, error) {
	if err := s.needStore("propose a plan for " + id.String()); err != nil {
		return Proposal{}, err
	}
	cat, err := s.catalog(ctx, id.Catalog)
	if err != nil {
		return Proposal{}, err
	}
	eff, err := s.Policy(ctx, id)
	if err != nil {
		return Proposal{}, err
	}
	if req.Project.TargetFileSizeBytes == 0 {
		req.Project.TargetFileSizeBytes, req.Project.TargetSource = eff.Policy.TargetFileSizeBytes, "the policy's target_file_size"
	}
	state, err := loadState(ctx, cat, id)
	if err != nil {
		return Proposal{}, err
	}
	minGain := s.cfg.MinGainPP()
	if req.MinGainPP != nil {
		minGain = *req.MinGainPP
	}
	return PlanBest(ctx, cat, s.store, state, PlanOptions{Project: req.Project, By: req.By, Force: req.Force, MinGainPP: minGain, Now: s.now, Policy: &eff.Policy})
}

// Approve approves proposed plan id as by ([ApprovePlan]).
func (s *Service) Approve(ctx context.Context, id, by string) (Plan, error) {
	if err := s.needStore("approve plan " + id); err != nil {
		return Plan{}, err
	}
	p, err := ApprovePlan(ctx, s.store, id, by, s.now())
	if err == nil {
		s.log.Info("plan approved", "plan_id", id, "table", p.Table, "by", by)
	}
	return p, err
}

// Reject rejects proposed plan id as by ([RejectPlan]).
func (s *Service) Reject(ctx context.Context, id, by string) (Plan, error) {
	if err := s.needStore("reject plan " + id); err != nil {
		return Plan{}, err
	}
	p, err := RejectPlan(ctx, s.store, id, by, s.now())
	if err == nil {
		s.log.Info("plan rejected", "plan_id", id, "table", p.Table, "by", by)
	}
	return p, err
}

// DecidePlan approves or rejects plan id as by: action is "approve" or
// "reject" ([Service.Approve], [Service.Reject]).
func (s *Service) DecidePlan(ctx context.Context, action, id, by string) (Plan, error) {
	switch action {
	case "approve":
		return s.Approve(ctx, id, by)
	case "reject":
		return s.Reject(ctx, id, by)
	}
	return Plan{}, fmt.Errorf("decide plan %s: unknown action %q: want approve or reject", id, action)
}
