-- +goose Up
-- The language a ClaimReview record declares (inLanguage, languageCode), as
-- ISO 639-1; '' when it declares none (lang is the one its claim is stemmed
-- in). Written by AddClaimReviews only.
ALTER TABLE archive_claims ADD COLUMN in_language text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE archive_claims DROP COLUMN in_language;
